#ifndef KOPT_INJECT_CUPTI_LOAD_H
#define KOPT_INJECT_CUPTI_LOAD_H

/*
 * CUPTI, loaded at run time.
 *
 * The injection library does not link libcupti: a missing or broken CUPTI
 * must become an entry in the output file, not a process that fails to
 * start.  kopt_inject_cupti_load() opens the library once and fills `kc`,
 * a table of pointers with the same names and types as the functions in
 * CUPTI's headers; call them as kc.cuptiSubscribe(...).
 *
 * cupti_profiler_host.h includes the C++ header <string>; the directory
 * cshim/ holds an empty file of that name so that C can include it.
 * generated_cuda_meta.h has no include guard and reaches us through
 * cupti.h only: include cupti.h through this header, once.
 */

#include <cuda.h>
#include <cupti.h>
#include <cupti_target.h>
#include <cupti_profiler_target.h>
#include <cupti_profiler_host.h>
#include <cupti_range_profiler.h>

#define KOPT_CUPTI_FUNCTIONS(X) \
	X(cuptiGetVersion) \
	X(cuptiGetResultString) \
	X(cuptiSubscribe) \
	X(cuptiUnsubscribe) \
	X(cuptiEnableCallback) \
	X(cuptiActivityEnable) \
	X(cuptiActivityRegisterCallbacks) \
	X(cuptiActivityGetNextRecord) \
	X(cuptiActivityGetNumDroppedRecords) \
	X(cuptiActivityFlushAll) \
	X(cuptiGetDeviceId) \
	X(cuptiProfilerInitialize) \
	X(cuptiProfilerDeviceSupported) \
	X(cuptiDeviceGetChipName) \
	X(cuptiProfilerGetCounterAvailability) \
	X(cuptiProfilerHostInitialize) \
	X(cuptiProfilerHostDeinitialize) \
	X(cuptiProfilerHostGetMetricProperties) \
	X(cuptiProfilerHostConfigAddMetrics) \
	X(cuptiProfilerHostGetConfigImageSize) \
	X(cuptiProfilerHostGetConfigImage) \
	X(cuptiProfilerHostGetNumOfPasses) \
	X(cuptiProfilerHostEvaluateToGpuValues) \
	X(cuptiRangeProfilerEnable) \
	X(cuptiRangeProfilerDisable) \
	X(cuptiRangeProfilerGetCounterDataSize) \
	X(cuptiRangeProfilerCounterDataImageInitialize) \
	X(cuptiRangeProfilerSetConfig) \
	X(cuptiRangeProfilerStart) \
	X(cuptiRangeProfilerStop) \
	X(cuptiRangeProfilerDecodeData) \
	X(cuptiRangeProfilerGetCounterDataInfo)

struct kopt_cupti {
#define KOPT_CUPTI_MEMBER(f) __typeof__(f) *f;
	KOPT_CUPTI_FUNCTIONS(KOPT_CUPTI_MEMBER)
#undef KOPT_CUPTI_MEMBER
	void *handle;
	char path[512];		/* the file that was opened */
};

extern struct kopt_cupti kc;

/*
 * Open libcupti and resolve every function.  Tries $KOPT_INJECT_CUPTI,
 * then the soname (the process may hold a copy already, as PyTorch
 * does), then $CUDA_HOME/lib64 and /usr/local/cuda/lib64.  Returns 0, or
 * -1 with a reason in `why` (dlerror's text or the missing symbol).
 */
int kopt_inject_cupti_load(char *why, size_t why_size);

/* CUPTI's name for a result code; never NULL. */
const char *kopt_inject_cupti_result_name(CUptiResult r);

#endif
