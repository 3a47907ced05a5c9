/*
 * The CUPTI Range Profiler, one window at a time.
 *
 * Set up once, on the context to profile: profiler initialised, device
 * checked, counter availability, host object, the metric names this
 * chip knows, config image, passes, range profiler enabled, counter data
 * image, SetConfig.  Then, per pass of a window (inject.c decides which
 * launches): Start at the entry of its first launch call and Stop after
 * its last (auto range: each launch is a range).  With user replay each
 * Stop submits one pass; with kernel replay CUPTI runs every pass inside
 * each launch call.  When all passes are in: decode, evaluate each
 * range, and make the image ready for the next window.  Between windows
 * the profiler is enabled but not started, and launches run at full
 * speed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "avail.h"
#include "inject.h"
#include "../banned.h"

/* Declare a CUPTI parameter block `var` of CUpti_<t>_Params with its
   size filled in and the rest zero. */
#define PARAMS(var, t) \
	CUpti_##t##_Params var = { \
		.structSize = CUpti_##t##_Params_STRUCT_SIZE }

/* Room for a whole window, and for another thread's kernel slipping in
   (the window is then dropped). */
#define MAX_RANGES (KOPT_INJECT_MAX_WINDOW + 4)

static int check(const char *call, CUptiResult r)
{
	return r == CUPTI_SUCCESS ? 0 : kopt_inject_cupti_fail(call, r);
}

/* Call a CUPTI function through the table; 0, or -1 with an error noted. */
#define TRY(f, ...) check(#f, kc.f(__VA_ARGS__))
#define CALL(f, ...) do { \
	if (TRY(f, __VA_ARGS__) < 0) \
		return -1; \
} while (0)

static int set_config(struct kopt_inject_rp *rp)
{
	PARAMS(p, RangeProfiler_SetConfig);
	p.pRangeProfilerObject = rp->obj;
	p.configSize = rp->config_size;
	p.pConfig = rp->config;
	p.counterDataImageSize = rp->cdata_size;
	p.pCounterDataImage = rp->cdata;
	p.range = CUPTI_AutoRange;
	p.replayMode = rp->replay;
	p.maxRangesPerPass = MAX_RANGES;
	p.numNestingLevels = 1;
	p.minNestingLevel = 1;
	p.passIndex = 0;
	p.targetNestingLevel = 1;
	CALL(cuptiRangeProfilerSetConfig, &p);
	rp->pass = 0;
	return 0;
}

static int init_image(struct kopt_inject_rp *rp)
{
	PARAMS(p, RangeProfiler_CounterDataImage_Initialize);
	p.pRangeProfilerObject = rp->obj;
	p.counterDataSize = rp->cdata_size;
	p.pCounterData = rp->cdata;
	CALL(cuptiRangeProfilerCounterDataImageInitialize, &p);
	return 0;
}

static int check_device(CUdevice dev)
{
	PARAMS(p, Profiler_DeviceSupported);
	const char *why = NULL;

	p.cuDevice = dev;
	p.api = CUPTI_PROFILER_RANGE_PROFILING;
	CALL(cuptiProfilerDeviceSupported, &p);
	if (p.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
		return 0;
	if (p.architecture != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
		why = "the GPU architecture has no range profiler";
	else if (p.vGpu == CUPTI_PROFILER_CONFIGURATION_DISABLED)
		why = "profiling is disabled on this virtual GPU";
	else if (p.vGpu != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
		why = "this virtual GPU does not support profiling";
	else if (p.confidentialCompute !=
		 CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
		why = "confidential computing is on";
	else if (p.sli != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
		why = "SLI is on";
	else if (p.cmp != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
		why = "the device is a mining processor";
	else if (p.wsl != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
		why = "WSL does not support profiling here";
	else
		why = "the device does not support profiling";
	kopt_inject_error("counters-unsupported",
			  "cuptiProfilerDeviceSupported", 0, "%s", why);
	return -1;
}

/*
 * What the counter availability image depends on, as the key it is kept
 * under (avail.h): the chip, the device, the driver and CUPTI.  0, or
 * -1 (nothing kept, nothing taken) when one of them is not known.
 */
static int avail_key(struct kopt_inject_rp *rp)
{
	char uuid[48];
	int driver = 0;
	uint32_t cupti = 0;

	rp->avail_key[0] = '\0';
	/* CUPTI's device index is the device's ordinal (check_device()) */
	if (kopt_inject_device_uuid((CUdevice)rp->device, uuid) < 0 ||
	    cuDriverGetVersion(&driver) != CUDA_SUCCESS ||
	    kc.cuptiGetVersion(&cupti) != CUPTI_SUCCESS)
		return -1;
	snprintf(rp->avail_key, sizeof(rp->avail_key),
		 "%s %s driver %d cupti %u", rp->chip, uuid, driver,
		 (unsigned)cupti);
	return 0;
}

static int host_setup(struct kopt_inject_rp *rp, CUcontext ctx,
		      const char *const *metrics, size_t n_metrics)
{
	PARAMS(ca, Profiler_GetCounterAvailability);
	PARAMS(hi, Profiler_Host_Initialize);
	PARAMS(am, Profiler_Host_ConfigAddMetrics);
	PARAMS(cs, Profiler_Host_GetConfigImageSize);
	PARAMS(ci, Profiler_Host_GetConfigImage);
	PARAMS(np, Profiler_Host_GetNumOfPasses);
	size_t n = 0;

	ca.ctx = ctx;
	kopt_inject_log("set-up: chip %s", rp->chip);
	if (g.cfg.cache && avail_key(rp) == 0 &&
	    kopt_inject_avail_load(g.cfg.cache, rp->avail_key, &rp->avail,
				   &n) == 0) {
		rp->avail_kept = 1;
		kopt_inject_log("set-up: counter availability of an earlier "
				"run (%zu bytes)", n);
	} else {
		CALL(cuptiProfilerGetCounterAvailability, &ca);
		rp->avail = calloc(1, ca.counterAvailabilityImageSize);
		if (!rp->avail)
			return -1;
		ca.pCounterAvailabilityImage = rp->avail;
		CALL(cuptiProfilerGetCounterAvailability, &ca);
		if (g.cfg.cache && rp->avail_key[0])
			kopt_inject_avail_store(g.cfg.cache, rp->avail_key,
						rp->avail,
						ca.counterAvailabilityImageSize);
	}

	hi.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
	hi.pChipName = rp->chip;
	hi.pCounterAvailabilityImage = rp->avail;
	kopt_inject_log("set-up: counter availability ready");
	CALL(cuptiProfilerHostInitialize, &hi);
	rp->host = hi.pHostObject;
	kopt_inject_log("set-up: host object made");

	/* keep the names this chip knows; the others become warnings */
	rp->n_metrics = 0;
	for (size_t i = 0; i < n_metrics; i++) {
		PARAMS(mp, Profiler_Host_GetMetricProperties);
		CUptiResult r;
		mp.pHostObject = rp->host;
		mp.pMetricName = metrics[i];
		r = kc.cuptiProfilerHostGetMetricProperties(&mp);
		if (r == CUPTI_SUCCESS)
			rp->metrics[rp->n_metrics++] = metrics[i];
		else
			kopt_inject_warning("metric-unknown",
				"metric '%s' is not available on %s (%s); "
				"left out", metrics[i], rp->chip,
				kopt_inject_cupti_result_name(r));
	}
	if (!rp->n_metrics) {
		kopt_inject_error("metrics-unknown", "", 0,
				  "none of the metrics asked for is available "
				  "on %s", rp->chip);
		return -1;
	}

	kopt_inject_log("set-up: metric names checked");
	am.pHostObject = rp->host;
	am.ppMetricNames = rp->metrics;
	am.numMetrics = rp->n_metrics;
	CALL(cuptiProfilerHostConfigAddMetrics, &am);
	cs.pHostObject = rp->host;
	CALL(cuptiProfilerHostGetConfigImageSize, &cs);
	rp->config_size = cs.configImageSize;
	rp->config = calloc(1, rp->config_size);
	if (!rp->config)
		return -1;
	ci.pHostObject = rp->host;
	ci.configImageSize = rp->config_size;
	ci.pConfigImage = rp->config;
	CALL(cuptiProfilerHostGetConfigImage, &ci);
	np.configImageSize = rp->config_size;
	np.pConfigImage = rp->config;
	CALL(cuptiProfilerHostGetNumOfPasses, &np);
	rp->passes = np.numOfPasses;
	kopt_inject_log("set-up: config image made");
	return 0;
}

static int target_setup(struct kopt_inject_rp *rp, CUcontext ctx)
{
	PARAMS(en, RangeProfiler_Enable);
	PARAMS(cs, RangeProfiler_GetCounterDataSize);

	en.ctx = ctx;
	CALL(cuptiRangeProfilerEnable, &en);
	rp->obj = en.pRangeProfilerObject;
	kopt_inject_log("set-up: range profiler enabled");

	cs.pRangeProfilerObject = rp->obj;
	cs.pMetricNames = rp->metrics;
	cs.numMetrics = rp->n_metrics;
	cs.maxNumOfRanges = MAX_RANGES;
	cs.maxNumRangeTreeNodes = MAX_RANGES;
	CALL(cuptiRangeProfilerGetCounterDataSize, &cs);
	rp->cdata_size = cs.counterDataSize;
	rp->cdata = calloc(1, rp->cdata_size);
	if (!rp->cdata)
		return -1;
	if (init_image(rp) < 0)
		return -1;
	kopt_inject_log("set-up: counter data image ready");
	if (set_config(rp) < 0)
		return -1;
	kopt_inject_log("set-up: config set");
	return 0;
}

int kopt_inject_rp_setup(struct kopt_inject_rp *rp, CUcontext ctx,
			 const char *const *metrics, size_t n_metrics,
			 enum kopt_inject_replay replay)
{
	PARAMS(pi, Profiler_Initialize);
	PARAMS(cn, Device_GetChipName);
	uint32_t dev = 0;
	double t0 = kopt_inject_now();

	rp->state = KOPT_INJECT_RP_FAILED; /* until the end */
	rp->ctx = ctx;
	rp->replay = replay == KOPT_INJECT_REPLAY_KERNEL ? CUPTI_KernelReplay
							 : CUPTI_UserReplay;
	kopt_inject_log("set-up: start");
	CALL(cuptiProfilerInitialize, &pi);
	kopt_inject_log("set-up: profiler initialised");
	CALL(cuptiGetDeviceId, ctx, &dev);
	rp->device = dev;
	if (check_device((CUdevice)dev) < 0)
		return -1;
	cn.deviceIndex = dev;
	CALL(cuptiDeviceGetChipName, &cn);
	snprintf(rp->chip, sizeof(rp->chip), "%s", cn.pChipName);
	if (host_setup(rp, ctx, metrics, n_metrics) < 0 ||
	    target_setup(rp, ctx) < 0) {
		/* perhaps the kept image: the next run reads it again */
		kopt_inject_rp_forget_avail(rp);
		return -1;
	}
	rp->state = KOPT_INJECT_RP_READY;
	rp->setup_s = kopt_inject_now() - t0;
	kopt_inject_log("range profiler on %s: %zu metrics, %zu passes, "
			"set up in %.3f s", rp->chip, rp->n_metrics,
			rp->passes, rp->setup_s);
	return 0;
}

void kopt_inject_rp_forget_avail(struct kopt_inject_rp *rp)
{
	if (rp->avail_kept && g.cfg.cache) {
		kopt_inject_avail_drop(g.cfg.cache, rp->avail_key);
		kopt_inject_log("counter availability of an earlier run "
				"dropped");
	}
}

int kopt_inject_rp_start(struct kopt_inject_rp *rp)
{
	PARAMS(p, RangeProfiler_Start);
	p.pRangeProfilerObject = rp->obj;
	kopt_inject_log("start: pass %zu begins", rp->pass + 1);
	CALL(cuptiRangeProfilerStart, &p);
	rp->running = 1;
	kopt_inject_log("start: pass %zu started", rp->pass + 1);
	return 0;
}

int kopt_inject_rp_stop(struct kopt_inject_rp *rp, int *all_passes)
{
	PARAMS(p, RangeProfiler_Stop);
	p.pRangeProfilerObject = rp->obj;
	rp->running = 0;
	*all_passes = 0;
	CALL(cuptiRangeProfilerStop, &p);
	rp->pass++;
	*all_passes = p.isAllPassSubmitted != 0;
	kopt_inject_log("stop: pass %zu of %zu submitted (next %zu), all %d",
			rp->pass, rp->passes, p.passIndex, *all_passes);
	return 0;
}

int kopt_inject_rp_collect(struct kopt_inject_rp *rp, size_t n,
			   double *values)
{
	PARAMS(dd, RangeProfiler_DecodeData);
	PARAMS(ci, RangeProfiler_GetCounterDataInfo);
	int ret = -1;

	for (size_t i = 0; i < n * rp->n_metrics; i++)
		values[i] = NAN;
	dd.pRangeProfilerObject = rp->obj;
	if (TRY(cuptiRangeProfilerDecodeData, &dd) < 0)
		goto reset;
	ci.pCounterDataImage = rp->cdata;
	ci.counterDataImageSize = rp->cdata_size;
	if (TRY(cuptiRangeProfilerGetCounterDataInfo, &ci) < 0)
		goto reset;
	if (ci.numTotalRanges != n || dd.numOfRangeDropped) {
		kopt_inject_warning("sample-ranges",
			"a window of %zu launches held %zu ranges (%zu dropped); "
			"it is left out (another thread launched at the same "
			"time?)", n, ci.numTotalRanges, dd.numOfRangeDropped);
		goto reset;
	}
	ret = 0;
	for (size_t r = 0; r < n && ret == 0; r++) {
		PARAMS(ev, Profiler_Host_EvaluateToGpuValues);
		ev.pHostObject = rp->host;
		ev.pCounterDataImage = rp->cdata;
		ev.counterDataImageSize = rp->cdata_size;
		ev.rangeIndex = r;
		ev.ppMetricNames = rp->metrics;
		ev.numMetrics = rp->n_metrics;
		ev.pMetricValues = values + r * rp->n_metrics;
		if (TRY(cuptiProfilerHostEvaluateToGpuValues, &ev) < 0)
			ret = -1;
	}
	kopt_inject_log("collect: %zu ranges evaluated", n);
reset:
	if (kopt_inject_rp_reset(rp) < 0)
		return -1;
	return ret;
}

/* Drop the profiler object and set up a new one on the same context. */
static int new_object(struct kopt_inject_rp *rp)
{
	kopt_inject_rp_disable(rp);
	free(rp->cdata);
	rp->cdata = NULL;
	if (target_setup(rp, rp->ctx) < 0) {
		rp->state = KOPT_INJECT_RP_FAILED;
		return -1;
	}
	rp->state = KOPT_INJECT_RP_READY;
	return 0;
}

int kopt_inject_rp_move(struct kopt_inject_rp *rp, CUcontext ctx)
{
	uint32_t dev = 0;

	/* a context whose device CUPTI cannot name is left alone, quietly:
	 * it is no failure of the profiler */
	if (kc.cuptiGetDeviceId(ctx, &dev) != CUPTI_SUCCESS ||
	    dev != rp->device)
		return 1;
	kopt_inject_log("move: the profiler follows a launch to context %p",
			(void *)ctx);
	kopt_inject_rp_disable(rp);
	rp->ctx = ctx;
	return new_object(rp);
}

int kopt_inject_rp_warm(struct kopt_inject_rp *rp)
{
	int all = 0;

	/*
	 * An empty window: every pass started and stopped, then decoded,
	 * so that the session is whole.  One Start and Stop followed by a
	 * reset left the next windows' values all null (measured); a new
	 * object instead pays the first Start again.
	 */
	PARAMS(dd, RangeProfiler_DecodeData);
	for (size_t i = 0; i < rp->passes && !all; i++) {
		if (kopt_inject_rp_start(rp) < 0 ||
		    kopt_inject_rp_stop(rp, &all) < 0)
			break;
	}
	dd.pRangeProfilerObject = rp->obj;
	TRY(cuptiRangeProfilerDecodeData, &dd);
	return kopt_inject_rp_reset(rp);
}

int kopt_inject_rp_set_replay(struct kopt_inject_rp *rp,
			      enum kopt_inject_replay replay)
{
	CUpti_ProfilerReplayMode mode = replay == KOPT_INJECT_REPLAY_KERNEL ?
					CUPTI_KernelReplay : CUPTI_UserReplay;

	if (rp->replay == mode)
		return 0;
	rp->replay = mode;
	kopt_inject_log("replay: %s", replay == KOPT_INJECT_REPLAY_KERNEL ?
			"kernel" : "user");
	/*
	 * Another mode on the object that ran passes in the first one is
	 * what CUPTI crashed on once (a PyTorch program, kernel replay after
	 * user replay): a new object for the new mode.
	 */
	return new_object(rp);
}

int kopt_inject_rp_reset(struct kopt_inject_rp *rp)
{
	if (init_image(rp) == 0 && set_config(rp) == 0)
		return 0;
	/* the object may be stuck mid-session: make a new one */
	return new_object(rp);
}

void kopt_inject_rp_disable(struct kopt_inject_rp *rp)
{
	PARAMS(p, RangeProfiler_Disable);
	int all;

	if (!rp->obj)
		return;
	if (rp->running)
		kopt_inject_rp_stop(rp, &all);
	p.pRangeProfilerObject = rp->obj;
	kc.cuptiRangeProfilerDisable(&p);
	rp->obj = NULL;
	rp->state = KOPT_INJECT_RP_DONE;
}
