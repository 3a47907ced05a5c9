#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "device.h"
#include "error.h"

#include "messages.h"

#define UUID "GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9"
#define OTHER "GPU-ffffffff-0000-1111-2222-333333333333"
#define BROKEN "GPU-12345678-9abc-def0-1234-56789abcdef0"

#define assert_near(x, want) assert_true(fabs((x) - (want)) < 1e-6)

static char dir[] = "/tmp/kopt-device-XXXXXX";

static void write_plain(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void calibrated(struct kopt_device *d, const char *uuid)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "NVIDIA H200");
	snprintf(d->uuid, sizeof(d->uuid), "%s", uuid);
	d->driver_version = 13000;
	d->sm_clock_mhz = 1980;
	d->measured_gbps = 4391.25;
	d->measured_tflops = 771.5;
	d->mma_sync_tflops = 612.125;
	d->wgmma_tflops = 771.5;
	snprintf(d->calibrated_at, sizeof(d->calibrated_at),
		 "2025-06-01T12:00:00Z");
}

static void test_peaks_h200(void **state)
{
	double tflops, gbps;

	(void)state;
	/*
	 * 132 SMs x 4096 bf16 flops per clock; the driver reports the
	 * 1980 MHz boost clock, NVIDIA's 989.4 TFLOP/s is the same product
	 * at 1830 MHz.  HBM3e: 6144 bits, 3201 MHz, two transfers a clock.
	 */
	kopt_device_peaks(9, 0, 132, 1980, 3201, 6144, &tflops, &gbps);
	assert_near(tflops, 1070.53056);
	assert_near(gbps, 4916.736);
	assert_true(fabs(gbps / 4800 - 1) < 0.03);

	kopt_device_peaks(9, 0, 132, 1830, 3201, 6144, &tflops, &gbps);
	assert_near(tflops, 989.42976);
	assert_true(fabs(tflops - 989.4) < 0.1);
	assert_near(gbps, 4916.736);
}

static void test_peaks_other_architectures(void **state)
{
	double tflops, gbps;

	(void)state;
	/* A100: 2048 flops per clock, 1555 GB/s as the datasheet says */
	kopt_device_peaks(8, 0, 108, 1410, 1215, 5120, &tflops, &gbps);
	assert_near(tflops, 311.86944);
	assert_near(gbps, 1555.2);
	/* other Ampere and Ada parts: half of that per SM */
	kopt_device_peaks(8, 9, 128, 2520, 10501, 384, &tflops, &gbps);
	assert_near(tflops, 330.301440);
	/* Turing is not in the table: no tensor peak, the bandwidth stays */
	kopt_device_peaks(7, 5, 40, 1590, 5001, 256, &tflops, &gbps);
	assert_true(tflops == 0);
	assert_near(gbps, 320.064);
	kopt_device_peaks(12, 0, 170, 2600, 14001, 512, &tflops, &gbps);
	assert_true(tflops == 0);
	assert_near(gbps, 1792.128);
}

static void test_no_driver(void **state)
{
	struct kopt_device d;
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	int n = 7;

	(void)state;
	/* where a driver is installed, this is not the machine to test on */
	if (lib) {
		dlclose(lib);
		skip();
	}
	/* the quiet probe says nothing */
	assert_int_equal(kopt_device_available(), 0);
	assert_string_equal(messages.buf, "");

	assert_int_equal(kopt_device_count(&n), KOPT_EUNSUPPORTED);
	assert_int_equal(n, 0);
	assert_true(kopt_starts_with(messages.buf, "error: no NVIDIA driver: "
				     "cannot load 'libcuda.so.1' ("));
	assert_true(kopt_ends_with(messages.buf, "); GPU steps need a machine "
				   "with an NVIDIA GPU and its driver\n"));
	/* one line */
	assert_ptr_equal(strchr(messages.buf, '\n'),
			 messages.buf + messages.len - 1);

	/* a query fails the same way and leaves nothing but the ordinal */
	kopt_buf_reset(&messages);
	memset(&d, 0xff, sizeof(d));
	assert_int_equal(kopt_device_query(&d, 1), KOPT_EUNSUPPORTED);
	assert_int_equal(d.ordinal, 1);
	assert_int_equal(d.sms, 0);
	assert_string_equal(d.uuid, "");
	assert_true(d.peak_tflops == 0 && d.measured_gbps == 0);
	assert_true(kopt_starts_with(messages.buf, "error: no NVIDIA "
				     "driver: "));
	assert_int_equal(kopt_device_available(), 0);
}

static void test_cache_round_trip(void **state)
{
	struct kopt_device saved, loaded;
	char *path = kopt_xstrfmt("%s/xdg/git-kopt/devices/%s.json", dir, UUID);

	(void)state;
	calibrated(&saved, UUID);
	assert_int_equal(kopt_device_cache_save(&saved), 0);
	assert_int_equal(access(path, R_OK), 0);

	memset(&loaded, 0, sizeof(loaded));
	snprintf(loaded.uuid, sizeof(loaded.uuid), "%s", UUID);
	assert_int_equal(kopt_device_cache_load(&loaded), 0);
	assert_true(loaded.measured_gbps == 4391.25);
	assert_true(loaded.measured_tflops == 771.5);
	assert_true(loaded.mma_sync_tflops == 612.125);
	assert_true(loaded.wgmma_tflops == 771.5);
	assert_string_equal(loaded.calibrated_at, "2025-06-01T12:00:00Z");
	/* what the driver tells is not taken from the cache */
	assert_string_equal(loaded.name, "");
	assert_int_equal(loaded.sm_clock_mhz, 0);

	/* saving again replaces the ceilings */
	saved.measured_gbps = 4500.5;
	assert_int_equal(kopt_device_cache_save(&saved), 0);
	assert_int_equal(kopt_device_cache_load(&loaded), 0);
	assert_true(loaded.measured_gbps == 4500.5);
	assert_string_equal(messages.buf, "");
	free(path);
}

static void test_cache_other_device(void **state)
{
	struct kopt_device saved, other;

	(void)state;
	calibrated(&saved, UUID);
	assert_int_equal(kopt_device_cache_save(&saved), 0);
	memset(&other, 0, sizeof(other));
	snprintf(other.uuid, sizeof(other.uuid), "%s", OTHER);
	assert_int_equal(kopt_device_cache_load(&other), KOPT_ENOTFOUND);
	assert_true(other.measured_gbps == 0 && other.measured_tflops == 0);
	assert_string_equal(other.calibrated_at, "");
	assert_string_equal(messages.buf, "");
}

static void test_cache_corrupt(void **state)
{
	struct kopt_device d;
	char *path = kopt_xstrfmt("%s/xdg/git-kopt/devices/%s.json", dir,
				  BROKEN);
	char *msg = kopt_xstrfmt("warning: ignoring unreadable calibration "
				 "cache '%s'\n", path);

	(void)state;
	memset(&d, 0, sizeof(d));
	snprintf(d.uuid, sizeof(d.uuid), "%s", BROKEN);
	assert_int_equal(kopt_device_cache_save(&d), 0);
	write_plain(path, "{\"measured_gbps\": 4391.25, \"measured_tfl");
	assert_int_equal(kopt_device_cache_load(&d), KOPT_ENOTFOUND);
	assert_string_equal(messages.buf, msg);
	assert_true(d.measured_gbps == 0);

	/* readable, but never measured: nothing to use, nothing to say */
	kopt_buf_reset(&messages);
	write_plain(path, "{\"measured_gbps\": 0, \"measured_tflops\": 5}");
	assert_int_equal(kopt_device_cache_load(&d), KOPT_ENOTFOUND);
	assert_string_equal(messages.buf, "");
	free(msg);
	free(path);
}

static void test_cache_home(void **state)
{
	struct kopt_device saved, loaded;
	char *home = kopt_xstrfmt("%s/home", dir);
	char *path = kopt_xstrfmt("%s/.cache/git-kopt/devices/%s.json", home,
				  UUID);

	(void)state;
	unsetenv("XDG_CACHE_HOME");
	setenv("HOME", home, 1);
	calibrated(&saved, UUID);
	saved.measured_gbps = 1234.5;
	assert_int_equal(kopt_device_cache_save(&saved), 0);
	assert_int_equal(access(path, R_OK), 0);
	memset(&loaded, 0, sizeof(loaded));
	snprintf(loaded.uuid, sizeof(loaded.uuid), "%s", UUID);
	assert_int_equal(kopt_device_cache_load(&loaded), 0);
	assert_true(loaded.measured_gbps == 1234.5);

	unsetenv("HOME");
	assert_int_equal(kopt_device_cache_save(&saved), -1);
	assert_string_equal(messages.buf, "error: cannot cache the "
			    "calibration: neither XDG_CACHE_HOME nor HOME is "
			    "set\n");
	assert_int_equal(kopt_device_cache_load(&loaded), KOPT_ENOTFOUND);
	free(path);
	free(home);
}

static int setup(void **state)
{
	char *xdg = kopt_xstrfmt("%s/xdg", dir);

	(void)state;
	setenv("XDG_CACHE_HOME", xdg, 1);
	free(xdg);
	catch_messages(state);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_peaks_h200, setup,
						release_messages),
		cmocka_unit_test_setup_teardown(test_peaks_other_architectures,
						setup, release_messages),
		cmocka_unit_test_setup_teardown(test_no_driver, setup,
						release_messages),
		cmocka_unit_test_setup_teardown(test_cache_round_trip, setup,
						release_messages),
		cmocka_unit_test_setup_teardown(test_cache_other_device, setup,
						release_messages),
		cmocka_unit_test_setup_teardown(test_cache_corrupt, setup,
						release_messages),
		cmocka_unit_test_setup_teardown(test_cache_home, setup,
						release_messages),
	};
	struct kopt_buf cmd = KOPT_BUF_INIT;
	int ret;

	if (!mkdtemp(dir))
		return 1;
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	kopt_buf_addf(&cmd, "rm -rf '%s'", dir);
	if (system(cmd.buf))
		ret = 1;
	kopt_buf_release(&cmd);
	return ret;
}
