#include "device.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "error.h"
#include "lockfile.h"
#include "banned.h"

#include "calibrate_ptx.h"

/* The few driver types and constants we use (no cuda.h at build time). */
typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUevent_st *CUevent;
typedef struct CUstream_st *CUstream;
typedef unsigned long long CUdeviceptr;
typedef struct { char bytes[16]; } CUuuid;

enum {
	ATTR_CLOCK_RATE = 13,
	ATTR_SM_COUNT = 16,
	ATTR_MEMORY_CLOCK_RATE = 36,
	ATTR_BUS_WIDTH = 37,
	ATTR_L2_SIZE = 38,
	ATTR_MAX_THREADS_PER_SM = 39,
	ATTR_CC_MAJOR = 75,
	ATTR_CC_MINOR = 76,
	ATTR_MAX_SMEM_PER_SM = 81,
	ATTR_MAX_REGS_PER_SM = 82,
};

static struct {
	void *lib;
	int initialised;
	CUresult (*Init)(unsigned);
	CUresult (*DriverGetVersion)(int *);
	CUresult (*DeviceGetCount)(int *);
	CUresult (*DeviceGet)(CUdevice *, int);
	CUresult (*DeviceGetName)(char *, int, CUdevice);
	CUresult (*DeviceGetAttribute)(int *, int, CUdevice);
	CUresult (*DeviceTotalMem)(size_t *, CUdevice);
	CUresult (*DeviceGetUuid)(CUuuid *, CUdevice);
	CUresult (*GetErrorName)(CUresult, const char **);
	CUresult (*GetErrorString)(CUresult, const char **);
	CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*DevicePrimaryCtxRelease)(CUdevice);
	CUresult (*CtxSetCurrent)(CUcontext);
	CUresult (*CtxSynchronize)(void);
	CUresult (*ModuleLoadData)(CUmodule *, const void *);
	CUresult (*ModuleUnload)(CUmodule);
	CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
	CUresult (*MemAlloc)(CUdeviceptr *, size_t);
	CUresult (*MemFree)(CUdeviceptr);
	CUresult (*MemGetInfo)(size_t *, size_t *);
	CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned,
				 unsigned, unsigned, unsigned, unsigned,
				 CUstream, void **, void **);
	CUresult (*EventCreate)(CUevent *, unsigned);
	CUresult (*EventDestroy)(CUevent);
	CUresult (*EventRecord)(CUevent, CUstream);
	CUresult (*EventSynchronize)(CUevent);
	CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
} cu;

static int cu_fail(CUresult r, const char *what)
{
	const char *name = NULL, *desc = NULL;

	if (cu.GetErrorName)
		cu.GetErrorName(r, &name);
	if (cu.GetErrorString)
		cu.GetErrorString(r, &desc);
	return kopt_error("CUDA driver: %s failed: %s (%s)", what,
			  name ? name : "unknown error",
			  desc ? desc : "no description");
}

#define CU(call, what) do { CUresult r_ = (call); \
	if (r_) { ret = cu_fail(r_, what); goto done; } } while (0)

static int load_driver(int quiet)
{
	static const struct { const char *name; size_t off; } syms[] = {
#define S(field, sym) { sym, offsetof(__typeof__(cu), field) }
		S(Init, "cuInit"),
		S(DriverGetVersion, "cuDriverGetVersion"),
		S(DeviceGetCount, "cuDeviceGetCount"),
		S(DeviceGet, "cuDeviceGet"),
		S(DeviceGetName, "cuDeviceGetName"),
		S(DeviceGetAttribute, "cuDeviceGetAttribute"),
		S(DeviceTotalMem, "cuDeviceTotalMem_v2"),
		S(DeviceGetUuid, "cuDeviceGetUuid_v2"),
		S(GetErrorName, "cuGetErrorName"),
		S(GetErrorString, "cuGetErrorString"),
		S(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
		S(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
		S(CtxSetCurrent, "cuCtxSetCurrent"),
		S(CtxSynchronize, "cuCtxSynchronize"),
		S(ModuleLoadData, "cuModuleLoadData"),
		S(ModuleUnload, "cuModuleUnload"),
		S(ModuleGetFunction, "cuModuleGetFunction"),
		S(MemAlloc, "cuMemAlloc_v2"),
		S(MemFree, "cuMemFree_v2"),
		S(MemGetInfo, "cuMemGetInfo_v2"),
		S(LaunchKernel, "cuLaunchKernel"),
		S(EventCreate, "cuEventCreate"),
		S(EventDestroy, "cuEventDestroy_v2"),
		S(EventRecord, "cuEventRecord"),
		S(EventSynchronize, "cuEventSynchronize"),
		S(EventElapsedTime, "cuEventElapsedTime"),
#undef S
	};
	size_t i;
	CUresult r;

	if (cu.initialised)
		return 0;
	if (!cu.lib) {
		cu.lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
		if (!cu.lib) {
			if (quiet)
				return KOPT_EUNSUPPORTED;
			kopt_error("no NVIDIA driver: cannot load 'libcuda.so.1' "
				   "(%s); GPU steps need a machine with an "
				   "NVIDIA GPU and its driver", dlerror());
			return KOPT_EUNSUPPORTED;
		}
	}
	for (i = 0; i < KOPT_ARRAY_SIZE(syms); i++) {
		void *p = dlsym(cu.lib, syms[i].name);
		if (!p) {
			if (!quiet)
				kopt_error("the NVIDIA driver lacks '%s'; it is "
					   "too old for git kopt", syms[i].name);
			return KOPT_EUNSUPPORTED;
		}
		memcpy((char *)&cu + syms[i].off, &p, sizeof(p));
	}
	r = cu.Init(0);
	if (r) {
		if (!quiet)
			cu_fail(r, "cuInit");
		return KOPT_EUNSUPPORTED;
	}
	cu.initialised = 1;
	return 0;
}

int kopt_device_available(void)
{
	int n = 0;

	if (load_driver(1))
		return 0;
	return !cu.DeviceGetCount(&n) && n > 0;
}

int kopt_device_count(int *out)
{
	int ret = load_driver(0);
	CUresult r;

	*out = 0;
	if (ret)
		return ret;
	r = cu.DeviceGetCount(out);
	if (r)
		return cu_fail(r, "cuDeviceGetCount");
	return 0;
}

/* Dense bf16 tensor flops per clock per SM, by architecture. */
static double tensor_flops_per_clock(int major, int minor)
{
	if (major == 8 && minor == 0)
		return 2048;
	if (major == 8)
		return 1024;
	if (major == 9)
		return 4096;
	if (major == 10)
		return 8192;
	return 0;
}

void kopt_device_peaks(int cc_major, int cc_minor, int sms,
		       double sm_clock_mhz, double mem_clock_mhz,
		       int bus_width_bits, double *tflops, double *gbps)
{
	*tflops = sms * sm_clock_mhz * 1e6 *
		  tensor_flops_per_clock(cc_major, cc_minor) / 1e12;
	/* double data rate: two transfers per memory clock */
	*gbps = bus_width_bits / 8.0 * mem_clock_mhz * 1e6 * 2 / 1e9;
}

int kopt_device_query(struct kopt_device *d, int ordinal)
{
	CUdevice dev;
	CUuuid uuid;
	int v, n, ret = load_driver(0);
	const unsigned char *u;

	memset(d, 0, sizeof(*d));
	d->ordinal = ordinal;
	if (ret)
		return ret;
	if ((ret = kopt_device_count(&n)))
		return ret;
	if (n == 0) {
		kopt_error("the NVIDIA driver reports no GPU");
		return KOPT_EUNSUPPORTED;
	}
	if (ordinal < 0 || ordinal >= n)
		return kopt_error("no GPU %d (this machine has %d)", ordinal, n);
	ret = 0;
	CU(cu.DeviceGet(&dev, ordinal), "cuDeviceGet");
	CU(cu.DeviceGetName(d->name, sizeof(d->name), dev), "cuDeviceGetName");
	CU(cu.DriverGetVersion(&d->driver_version), "cuDriverGetVersion");
	CU(cu.DeviceTotalMem(&d->total_mem, dev), "cuDeviceTotalMem");
	CU(cu.DeviceGetUuid(&uuid, dev), "cuDeviceGetUuid");
	u = (const unsigned char *)uuid.bytes;
	snprintf(d->uuid, sizeof(d->uuid),
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4],
		 u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
		 u[14], u[15]);
#define ATTR(field, a) CU(cu.DeviceGetAttribute(&v, a, dev), \
			  "cuDeviceGetAttribute"); field = v
	ATTR(d->cc_major, ATTR_CC_MAJOR);
	ATTR(d->cc_minor, ATTR_CC_MINOR);
	ATTR(d->sms, ATTR_SM_COUNT);
	ATTR(d->sm_clock_mhz, ATTR_CLOCK_RATE) / 1000;
	ATTR(d->mem_clock_mhz, ATTR_MEMORY_CLOCK_RATE) / 1000;
	ATTR(d->bus_width_bits, ATTR_BUS_WIDTH);
	ATTR(d->l2_bytes, ATTR_L2_SIZE);
	ATTR(d->max_threads_per_sm, ATTR_MAX_THREADS_PER_SM);
	ATTR(d->max_regs_per_sm, ATTR_MAX_REGS_PER_SM);
	ATTR(d->max_smem_per_sm, ATTR_MAX_SMEM_PER_SM);
#undef ATTR
	kopt_device_peaks(d->cc_major, d->cc_minor, d->sms, d->sm_clock_mhz,
			  d->mem_clock_mhz, d->bus_width_bits, &d->peak_tflops,
			  &d->peak_gbps);
done:
	return ret;
}

struct timing {
	CUevent start, stop;
};

static int time_launches(double *ms_out, CUfunction f, unsigned grid,
			 unsigned block, void **args, int reps)
{
	CUevent start = NULL, stop = NULL;
	float ms = 0;
	int ret = 0, i;

	CU(cu.EventCreate(&start, 0), "cuEventCreate");
	CU(cu.EventCreate(&stop, 0), "cuEventCreate");
	/* warm-up: module load, clocks */
	CU(cu.LaunchKernel(f, grid, 1, 1, block, 1, 1, 0, NULL, args, NULL),
	   "cuLaunchKernel");
	CU(cu.CtxSynchronize(), "running a calibration kernel");
	CU(cu.EventRecord(start, NULL), "cuEventRecord");
	for (i = 0; i < reps; i++)
		CU(cu.LaunchKernel(f, grid, 1, 1, block, 1, 1, 0, NULL, args,
				   NULL), "cuLaunchKernel");
	CU(cu.EventRecord(stop, NULL), "cuEventRecord");
	CU(cu.EventSynchronize(stop), "running a calibration kernel");
	CU(cu.EventElapsedTime(&ms, start, stop), "cuEventElapsedTime");
	*ms_out = ms / reps;
done:
	if (start)
		cu.EventDestroy(start);
	if (stop)
		cu.EventDestroy(stop);
	return ret;
}

static double median3(double a, double b, double c)
{
	if (a > b) { double x = a; a = b; b = x; }
	if (b > c) { double x = b; b = c; c = x; }
	if (a > b) { double x = a; a = b; b = x; }
	return b;
}

static void now_iso(char *buf, size_t n)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int kopt_device_calibrate(struct kopt_device *d)
{
	CUdevice dev;
	CUcontext ctx = NULL;
	CUmodule mod = NULL, mod90 = NULL;
	CUfunction fcopy, ffill, fmma, fwgmma = NULL;
	CUdeviceptr src = 0, dst = 0, small = 0, out = 0;
	size_t free_b = 0, total_b = 0, bytes, n16, nfill;
	unsigned grid;
	uint32_t seed = 12345;
	double t[3];
	int ret = 0, iters, i;

	if ((ret = load_driver(0)))
		return ret;
	CU(cu.DeviceGet(&dev, d->ordinal), "cuDeviceGet");
	CU(cu.DevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
	CU(cu.CtxSetCurrent(ctx), "cuCtxSetCurrent");
	CU(cu.ModuleLoadData(&mod, calibrate_ptx), "loading the calibration "
	   "kernels");
	CU(cu.ModuleGetFunction(&fcopy, mod, "kopt_copy"), "cuModuleGetFunction");
	CU(cu.ModuleGetFunction(&ffill, mod, "kopt_fill"), "cuModuleGetFunction");
	CU(cu.ModuleGetFunction(&fmma, mod, "kopt_mma_bf16"),
	   "cuModuleGetFunction");
	if (d->cc_major == 9 && d->cc_minor == 0 &&
	    !cu.ModuleLoadData(&mod90, calibrate_sm90a_ptx))
		cu.ModuleGetFunction(&fwgmma, mod90, "kopt_wgmma_bf16");

	/* Copy: two buffers far larger than L2, filled with non-zero data. */
	CU(cu.MemGetInfo(&free_b, &total_b), "cuMemGetInfo");
	bytes = (size_t)1 << 30;
	while (bytes > ((size_t)64 << 20) && bytes * 2 > free_b / 2)
		bytes /= 2;
	CU(cu.MemAlloc(&src, bytes), "allocating device memory");
	CU(cu.MemAlloc(&dst, bytes), "allocating device memory");
	n16 = bytes / 16;
	nfill = bytes / 4;
	grid = (unsigned)d->sms * 8;
	{
		void *fargs[] = { &src, &nfill, &seed };
		CU(cu.LaunchKernel(ffill, grid, 1, 1, 256, 1, 1, 0, NULL, fargs,
				   NULL), "cuLaunchKernel");
		void *dargs[] = { &dst, &nfill, &seed };
		CU(cu.LaunchKernel(ffill, grid, 1, 1, 256, 1, 1, 0, NULL, dargs,
				   NULL), "cuLaunchKernel");
	}
	for (i = 0; i < 3; i++) {
		void *args[] = { &src, &dst, &n16 };
		double ms;
		if ((ret = time_launches(&ms, fcopy, (unsigned)d->sms * 16, 512,
					 args, 10)))
			goto done;
		t[i] = 2.0 * (double)bytes / (ms * 1e-3) / 1e9;
	}
	d->measured_gbps = median3(t[0], t[1], t[2]);

	/* Matrix products from registers (mma.sync) and shared memory. */
	{
		size_t nsmall = 1024;
		CU(cu.MemAlloc(&small, nsmall * 4), "allocating device memory");
		CU(cu.MemAlloc(&out, (size_t)d->sms * 32 * 256 * 4),
		   "allocating device memory");
		void *fargs[] = { &small, &nsmall, &seed };
		CU(cu.LaunchKernel(ffill, 4, 1, 1, 256, 1, 1, 0, NULL, fargs,
				   NULL), "cuLaunchKernel");
	}
	iters = 2048;
	for (i = 0; i < 3; i++) {
		void *args[] = { &small, &out, &iters };
		unsigned blocks = (unsigned)d->sms * 8;
		double ms;
		if ((ret = time_launches(&ms, fmma, blocks, 256, args, 5)))
			goto done;
		/* 8 warps x 8 accumulators x 4096 flops per iteration */
		t[i] = (double)blocks * 8 * 8 * 4096.0 * iters / (ms * 1e-3) /
		       1e12;
	}
	d->mma_sync_tflops = median3(t[0], t[1], t[2]);
	d->measured_tflops = d->mma_sync_tflops;
	if (fwgmma) {
		iters = 1024;
		for (i = 0; i < 3; i++) {
			void *args[] = { &small, &out, &iters };
			unsigned blocks = (unsigned)d->sms * 3;
			double ms;
			if ((ret = time_launches(&ms, fwgmma, blocks, 128, args,
						 5)))
				goto done;
			/* 4 wgmma m64n256k16 per iteration per warpgroup */
			t[i] = (double)blocks * 4 * 524288.0 * iters /
			       (ms * 1e-3) / 1e12;
		}
		d->wgmma_tflops = median3(t[0], t[1], t[2]);
		if (d->wgmma_tflops > d->measured_tflops)
			d->measured_tflops = d->wgmma_tflops;
	}
	now_iso(d->calibrated_at, sizeof(d->calibrated_at));
done:
	if (src)
		cu.MemFree(src);
	if (dst)
		cu.MemFree(dst);
	if (small)
		cu.MemFree(small);
	if (out)
		cu.MemFree(out);
	if (mod90)
		cu.ModuleUnload(mod90);
	if (mod)
		cu.ModuleUnload(mod);
	if (ctx)
		cu.DevicePrimaryCtxRelease(dev);
	return ret;
}

static char *cache_path(const struct kopt_device *d)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

	if (xdg && *xdg)
		return kopt_xstrfmt("%s/git-kopt/devices/%s.json", xdg, d->uuid);
	if (home && *home)
		return kopt_xstrfmt("%s/.cache/git-kopt/devices/%s.json", home,
				    d->uuid);
	return NULL;
}

int kopt_device_cache_load(struct kopt_device *d)
{
	struct kopt_buf text = KOPT_BUF_INIT;
	char *path = cache_path(d);
	cJSON *root = NULL, *it;
	int ret = KOPT_ENOTFOUND;

	if (!path || kopt_buf_read_file(&text, path))
		goto done;
	root = cJSON_Parse(text.buf);
	if (!root) {
		kopt_warning("ignoring unreadable calibration cache '%s'", path);
		goto done;
	}
#define NUM(field, key) it = cJSON_GetObjectItemCaseSensitive(root, key); \
	if (cJSON_IsNumber(it)) d->field = it->valuedouble
	NUM(measured_gbps, "measured_gbps");
	NUM(measured_tflops, "measured_tflops");
	NUM(mma_sync_tflops, "mma_sync_tflops");
	NUM(wgmma_tflops, "wgmma_tflops");
#undef NUM
	it = cJSON_GetObjectItemCaseSensitive(root, "calibrated_at");
	if (cJSON_IsString(it))
		snprintf(d->calibrated_at, sizeof(d->calibrated_at), "%s",
			 it->valuestring);
	ret = d->measured_gbps > 0 ? 0 : KOPT_ENOTFOUND;
done:
	cJSON_Delete(root);
	kopt_buf_release(&text);
	free(path);
	return ret;
}

int kopt_device_cache_save(const struct kopt_device *d)
{
	char *path = cache_path(d), *json = NULL;
	cJSON *root = cJSON_CreateObject();
	int ret;

	if (!path) {
		cJSON_Delete(root);
		return kopt_error("cannot cache the calibration: neither "
				  "XDG_CACHE_HOME nor HOME is set");
	}
	cJSON_AddStringToObject(root, "name", d->name);
	cJSON_AddStringToObject(root, "uuid", d->uuid);
	cJSON_AddNumberToObject(root, "driver_version", d->driver_version);
	cJSON_AddNumberToObject(root, "sm_clock_mhz", d->sm_clock_mhz);
	cJSON_AddNumberToObject(root, "measured_gbps", d->measured_gbps);
	cJSON_AddNumberToObject(root, "measured_tflops", d->measured_tflops);
	cJSON_AddNumberToObject(root, "mma_sync_tflops", d->mma_sync_tflops);
	cJSON_AddNumberToObject(root, "wgmma_tflops", d->wgmma_tflops);
	cJSON_AddStringToObject(root, "calibrated_at", d->calibrated_at);
	json = cJSON_Print(root);
	ret = kopt_write_file_atomic(path, json, strlen(json), 0644);
	cJSON_free(json);
	cJSON_Delete(root);
	free(path);
	return ret;
}
