#ifndef KOPT_DEVICE_H
#define KOPT_DEVICE_H

/*
 * The GPU, through the CUDA driver API loaded at run time (dlopen of
 * libcuda.so.1), so that every command that does not touch the GPU works
 * on machines without a driver.
 *
 * kopt_device_query() fills a struct kopt_device with what the driver
 * says (name, compute capability, SMs, clocks, memory) and the
 * theoretical peaks derived from it.  kopt_device_calibrate() measures the
 * real ceilings once with the project's own kernels (a device-memory copy
 * and bf16 matrix products, lib/calibrate/) and kopt_device_cache_save()
 * keeps them per device (by UUID) under $XDG_CACHE_HOME/git-kopt/devices/
 * (or ~/.cache/...), where kopt_device_cache_load() finds them again.
 *
 * Failures are reported through kopt_error() with the cause (no driver,
 * no device, a CUDA error by name) and return KOPT_EUNSUPPORTED when no
 * GPU can be used at all.
 */

#include <stddef.h>

struct kopt_device {
	int ordinal;
	char name[256];
	char uuid[48];          /* GPU-xxxxxxxx-xxxx-... */
	int driver_version;     /* e.g. 13000 */
	int cc_major, cc_minor;
	int sms;
	int sm_clock_mhz;
	int mem_clock_mhz;
	int bus_width_bits;
	size_t total_mem;
	size_t l2_bytes;
	int max_threads_per_sm;
	int max_regs_per_sm;
	size_t max_smem_per_sm;
	double peak_tflops;     /* theoretical dense bf16, 0 if unknown */
	double peak_gbps;       /* theoretical DRAM bandwidth */
	/* calibration; zero when not measured */
	double measured_gbps;   /* copy: bytes read + written per second */
	double measured_tflops; /* best bf16 matrix rate measured */
	double mma_sync_tflops; /* warp-level mma.sync */
	double wgmma_tflops;    /* warpgroup wgmma (Hopper) */
	char calibrated_at[32]; /* UTC, ISO 8601 */
};

/*
 * Theoretical peaks from the architecture and clocks: dense bf16 tensor
 * TFLOP/s (0 when the architecture is not known) and DRAM GB/s.
 */
void kopt_device_peaks(int cc_major, int cc_minor, int sms,
		       double sm_clock_mhz, double mem_clock_mhz,
		       int bus_width_bits, double *tflops, double *gbps);

/* 1 if a driver can be loaded and reports at least one device. */
int kopt_device_available(void);
int kopt_device_count(int *out);
int kopt_device_query(struct kopt_device *out, int ordinal);
int kopt_device_calibrate(struct kopt_device *dev);
/* 0 and the calibration filled in, KOPT_ENOTFOUND when none is cached. */
int kopt_device_cache_load(struct kopt_device *dev);
int kopt_device_cache_save(const struct kopt_device *dev);

#endif
