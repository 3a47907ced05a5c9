#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "builtin.h"
#include "device.h"
#include "banned.h"

static const char *const device_usage[] = {
	"git kopt device [--calibrate] [--json] [--gpu <n>]",
	NULL
};

static void print_human(const struct kopt_device *d)
{
	printf("GPU %d: %s (%s)\n", d->ordinal, d->name, d->uuid);
	printf("  compute capability   %d.%d\n", d->cc_major, d->cc_minor);
	printf("  SMs                  %d\n", d->sms);
	printf("  SM clock             %d MHz\n", d->sm_clock_mhz);
	printf("  memory clock         %d MHz, %d-bit bus\n", d->mem_clock_mhz,
	       d->bus_width_bits);
	printf("  memory               %.1f GiB\n",
	       (double)d->total_mem / (1024.0 * 1024 * 1024));
	printf("  L2 cache             %.0f MiB\n",
	       (double)d->l2_bytes / (1024.0 * 1024));
	printf("  driver               %d.%d\n", d->driver_version / 1000,
	       d->driver_version % 1000 / 10);
	if (d->peak_tflops > 0)
		printf("  peak bf16 tensor     %.0f TFLOP/s (theoretical)\n",
		       d->peak_tflops);
	else
		printf("  peak bf16 tensor     unknown for this architecture\n");
	printf("  peak DRAM            %.0f GB/s (theoretical)\n", d->peak_gbps);
	if (d->measured_gbps > 0) {
		printf("  measured copy        %.0f GB/s (%.0f%% of peak)\n",
		       d->measured_gbps, 100 * d->measured_gbps / d->peak_gbps);
		printf("  measured bf16 mma    %.0f TFLOP/s (mma.sync %.0f",
		       d->measured_tflops, d->mma_sync_tflops);
		if (d->wgmma_tflops > 0)
			printf(", wgmma %.0f", d->wgmma_tflops);
		printf(")\n");
		printf("  calibrated           %s\n", d->calibrated_at);
	} else {
		printf("  measured ceilings    none yet; run 'git kopt device "
		       "--calibrate'\n");
	}
}

static void print_json(const struct kopt_device *d)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *cal;
	char cc[16], *s;

	snprintf(cc, sizeof(cc), "%d.%d", d->cc_major, d->cc_minor);
	cJSON_AddNumberToObject(o, "ordinal", d->ordinal);
	cJSON_AddStringToObject(o, "name", d->name);
	cJSON_AddStringToObject(o, "uuid", d->uuid);
	cJSON_AddStringToObject(o, "cc", cc);
	cJSON_AddNumberToObject(o, "sms", d->sms);
	cJSON_AddNumberToObject(o, "sm_clock_mhz", d->sm_clock_mhz);
	cJSON_AddNumberToObject(o, "mem_clock_mhz", d->mem_clock_mhz);
	cJSON_AddNumberToObject(o, "bus_width_bits", d->bus_width_bits);
	cJSON_AddNumberToObject(o, "memory_bytes", (double)d->total_mem);
	cJSON_AddNumberToObject(o, "l2_bytes", (double)d->l2_bytes);
	cJSON_AddNumberToObject(o, "driver_version", d->driver_version);
	if (d->peak_tflops > 0)
		cJSON_AddNumberToObject(o, "peak_tflops", d->peak_tflops);
	else
		cJSON_AddNullToObject(o, "peak_tflops");
	cJSON_AddNumberToObject(o, "peak_gbps", d->peak_gbps);
	if (d->measured_gbps > 0) {
		cal = cJSON_AddObjectToObject(o, "calibration");
		cJSON_AddNumberToObject(cal, "measured_gbps", d->measured_gbps);
		cJSON_AddNumberToObject(cal, "measured_tflops",
					d->measured_tflops);
		cJSON_AddNumberToObject(cal, "mma_sync_tflops",
					d->mma_sync_tflops);
		if (d->wgmma_tflops > 0)
			cJSON_AddNumberToObject(cal, "wgmma_tflops",
						d->wgmma_tflops);
		cJSON_AddStringToObject(cal, "calibrated_at", d->calibrated_at);
	} else {
		cJSON_AddNullToObject(o, "calibration");
	}
	s = cJSON_Print(o);
	printf("%s\n", s);
	cJSON_free(s);
	cJSON_Delete(o);
}

int cmd_device(int argc, const char **argv, struct kopt_ctx *ctx)
{
	int calibrate = 0, json = 0, gpu = 0;
	const struct kopt_option options[] = {
		OPT_BOOL(0, "calibrate", &calibrate,
			 "measure copy bandwidth and bf16 matrix rate, and "
			 "cache them for this GPU"),
		OPT_BOOL(0, "json", &json, "print JSON"),
		OPT_INT(0, "gpu", &gpu, "n", "which GPU (default 0)"),
		OPT_END()
	};
	struct kopt_device d;

	(void)ctx;
	argc = kopt_parse_options(argc, argv, options, device_usage, 0);
	if (argc)
		kopt_usage_error(device_usage, options, "too many arguments");
	kopt_lib_or_die(kopt_device_query(&d, gpu));
	if (calibrate) {
		fprintf(stderr, "calibrating %s: copy bandwidth and bf16 "
			"matrix rate...\n", d.name);
		kopt_lib_or_die(kopt_device_calibrate(&d));
		kopt_lib_or_die(kopt_device_cache_save(&d));
	} else {
		kopt_device_cache_load(&d);
	}
	if (json)
		print_json(&d);
	else
		print_human(&d);
	return 0;
}
