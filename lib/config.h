#ifndef KOPT_CONFIG_H
#define KOPT_CONFIG_H

/*
 * Project settings: `.kopt` at the top of the work tree, in git-config
 * syntax, read through libgit2's config API and layered under the
 * `kopt.*` keys of the repository's and the user's git config (personal
 * settings such as the agent backend or the GPU to use).
 *
 * kopt_config_load() fills a struct kopt_config (KOPT_CONFIG_INIT) with
 * typed, validated values; each problem is reported as
 * "<file>:<line>: <what>" and the load fails as a whole (KOPT_EINVALID),
 * so a command never runs on half-read settings.  A missing `.kopt` is
 * KOPT_ENOTFOUND (nothing printed): the repository is not initialised.
 * kopt_config_release() frees everything; strings are owned by the
 * config and borrowed by callers.
 *
 * Names of kernels, trials and languages match [a-z0-9][a-z0-9_.-]* and
 * contain no "..".  Commands from `build` and `run` are expanded with
 * kopt_config_expand(), which substitutes only validated values.
 */

#include <git2.h>

#include "buf.h"
#include "strvec.h"

/*
 * The longest wait for a busy GPU, in seconds: kopt.gpuWait and
 * --gpu-wait take 0 to this (a day).
 */
#define KOPT_GPU_WAIT_MAX_S 86400

enum kopt_control {
	KOPT_CONTROL_NONE = 0,
	KOPT_CONTROL_BLOCK = 1,
	KOPT_CONTROL_WARP = 2,
	KOPT_CONTROL_THREAD = 3,
};

struct kopt_trial {
	char *name;
	long b, s, t;
	int line;
};

struct kopt_language {
	char *name;
	enum kopt_control control;
	char *catalog;          /* path of the language catalog */
	int line;
};

struct kopt_param {
	char *name;
	double value;
};

struct kopt_target {
	char *trial;            /* the trial the condition is evaluated on */
	char *expr;             /* a comparison over metric names */
	char *text;             /* as written */
};

/*
 * A tuning parameter (`tune = NAME=v1,v2,...` in the kernel's section):
 * its name (a C identifier, substituted as `{NAME}` into build and run)
 * and its values, numbers in the order written.
 */
struct kopt_tune_param {
	char *name;
	double *values;
	size_t nr;
	int line;
};

/* A restriction (`tune-restrict = <expression>`) and where it was written. */
struct kopt_tune_restrict {
	char *expr;
	int line;
};

struct kopt_kernel {
	char *name;
	char *language;
	char *source;           /* pattern with {version} */
	char *build;            /* command line, may be NULL */
	char *run;              /* command line */
	char *flops;            /* expressions, may be NULL */
	char *bytes;
	char *rename;           /* version-suffix rule: "suffix" or "none" */
	char *stages;           /* glob of the kernel names that are stages */
	struct kopt_param *params;
	size_t params_nr, params_alloc;
	struct kopt_target *targets;
	size_t targets_nr, targets_alloc;
	/* the tuning space (lib/tune explores it) */
	struct kopt_tune_param *tune;
	size_t tune_nr, tune_alloc;
	struct kopt_tune_restrict *restricts;
	size_t restricts_nr, restricts_alloc;
	double *tune_default;   /* one value per parameter, after loading */
	char *tune_default_id;  /* its {tiling} */
	char *tune_time;        /* how the benchmark reports its time */
	int line;
};

struct kopt_config {
	char *path;             /* the file as named in messages (".kopt") */
	double noise_pct;       /* kopt.noise, in percent */
	char *catalog;          /* kopt.catalog */
	char *knowledge;        /* kopt.knowledge: root of the knowledge base */
	int timeout_s;          /* kopt.timeout: per benchmark run */
	char *agent;            /* kopt.agent: command that runs an agent */
	int gpu;                /* kopt.gpu: device ordinal */
	int gpu_wait_s;         /* kopt.gpuWait: seconds to wait for it */
	char *executor;         /* kopt.executor: "local" or "slurm" */
	char *slurm_partition;  /* kopt.slurmPartition, may be NULL */
	char *slurm_account;    /* kopt.slurmAccount, may be NULL */
	char *slurm_time;       /* kopt.slurmTime: per task, sbatch --time */
	char *slurm_gres;       /* kopt.slurmGres: "gpu:1" unless "none" */
	char *slurm_device;     /* kopt.slurmDevice: the GPU model tasks get */
	int slurm_tasks;        /* kopt.slurmTasks: array tasks at once */
	int threads;            /* kopt.threads: 0, one per CPU (lib/parallel) */
	struct kopt_trial *trials;
	size_t trials_nr, trials_alloc;
	struct kopt_language *languages;
	size_t languages_nr, languages_alloc;
	struct kopt_kernel *kernels;
	size_t kernels_nr, kernels_alloc;
};

#define KOPT_CONFIG_INIT { 0 }

#define KOPT_DEFAULT_CATALOG ".claude/skills/optimization-catalog/SKILL.md"
#define KOPT_DEFAULT_KNOWLEDGE "docs/knowledge"
#define KOPT_DEFAULT_NOISE_PCT 3.0
#define KOPT_DEFAULT_TIMEOUT_S 600

/*
 * The settings of a git-config text written plainly, in their order and
 * named as libgit2 names them ("section.sub.key": the section and the
 * key lower-cased, the subsection as written; `value` NULL for a key
 * without '='): every line blank, a comment, a header `[name]` or
 * `[name "sub"]`, or `key = value` whose value has no quote, backslash,
 * '#' or ';'.  0, or -1 (nothing kept) for a text with anything else
 * (quotes, escapes, comments after a value, continued lines, includes,
 * carriage returns, a byte-order mark), which libgit2 then reads.
 */
struct kopt_config_entry {
	char *name;
	char *value;
};
int kopt_config_plain_entries(const char *text, size_t len,
			      struct kopt_config_entry **out, size_t *nr);
void kopt_config_entries_free(struct kopt_config_entry *e, size_t nr);

/*
 * Load `<workdir>/.kopt` of `repo`, then the kopt.* keys of its git
 * configuration (repository, global, system), which win.
 */
int kopt_config_load(struct kopt_config *out, git_repository *repo);
/*
 * Load a .kopt file alone; `label` names it in messages.  `overlay`, if
 * not NULL, supplies kopt.* keys that win.
 */
int kopt_config_load_file(struct kopt_config *out, const char *path,
			  const char *label, git_config *overlay);
/* Load .kopt text held in memory (a blob at some revision). */
int kopt_config_load_buf(struct kopt_config *out, const char *data,
			 size_t len, const char *label);
/*
 * The settings committed in `tree` (its `.kopt` alone, no git
 * configuration): what the gate and review read, so that a change
 * cannot loosen its own checks.  `label` names the file in
 * messages.  KOPT_ENOTFOUND (not printed) when there is no `.kopt`.
 */
int kopt_config_load_tree(struct kopt_config *out, git_repository *repo,
			  const git_tree *tree, const char *label);
/*
 * The same without the [kernel] sections, which are not read: what the
 * gate needs (thresholds, trials, languages and catalogs) at a cost that
 * does not grow with the number of kernels.
 */
int kopt_config_load_gate(struct kopt_config *out, git_repository *repo,
			  const git_tree *tree, const char *label);
void kopt_config_release(struct kopt_config *cfg);

const struct kopt_kernel *kopt_config_kernel(const struct kopt_config *cfg,
					     const char *name);
const struct kopt_trial *kopt_config_trial(const struct kopt_config *cfg,
					   const char *name);
const struct kopt_language *
kopt_config_language(const struct kopt_config *cfg, const char *name);
/* The language catalog path (configured or the default), owned by caller. */
char *kopt_language_catalog_path(const struct kopt_language *lang);
/*
 * Every catalog of the settings, appended to `out`: the shared one
 * (configured or the default) first, then each language's, once each.
 */
void kopt_config_catalogs(struct kopt_strvec *out,
			  const struct kopt_config *cfg);

const char *kopt_control_name(enum kopt_control c);
enum kopt_control kopt_control_parse(const char *s);

/* 1 if `name` is a valid kernel/trial/language/version name. */
int kopt_valid_name(const char *name);
/* 1 if the n bytes at `s` are a C identifier. */
int kopt_is_identifier(const char *s, size_t n);

/* Values substituted into command templates and expressions. */
struct kopt_vars {
	const struct kopt_kernel *kernel;  /* params, {kernel} */
	const char *version;
	const char *tiling;
	long b, s, t;
	int have_bst;
	/*
	 * The value of each tuning parameter of the kernel (kernel->tune_nr
	 * of them), or NULL for the hand-picked default; {tiling} is the
	 * default's name when `tiling` is NULL.
	 */
	const double *tune_values;
};

#define KOPT_DEFAULT_TUNE_TIME "median {us} us"

/*
 * Expand {kernel} {version} {b} {s} {t} {tiling}, param names and tuning
 * parameter names in `tmpl` into `out`.  Every value is validated (a
 * name or a number) before it is substituted.  An unknown placeholder,
 * a missing value or one that is not a plain name is reported as
 * "<what>: <why>" (`what` names the template: ".kopt: kernel 'k': run";
 * NULL: "<why>" alone) and returns KOPT_EINVALID.
 */
int kopt_config_expand(struct kopt_buf *out, const char *tmpl,
		       const struct kopt_vars *vars, const char *what);
/*
 * Evaluate an expression over b, s, t, the kernel's params and its tuning
 * parameters.  A failure is reported as kopt_config_expand()'s are,
 * "<what>: <why>", and returns KOPT_ENOTFOUND (a name without a value)
 * or KOPT_EINVALID.
 */
int kopt_config_eval(const char *expr, const struct kopt_vars *vars,
		     double *out, const char *what);

/* A number as substituted: integers without a point, else %.17g. */
void kopt_config_format_number(struct kopt_buf *out, double v);

/*
 * Quote a value for writing into a git-config file (adds quotes when
 * needed, escapes backslash, quote and newline).
 */
void kopt_config_quote(struct kopt_buf *out, const char *value);

#endif
