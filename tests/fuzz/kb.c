/*
 * The knowledge base as a whole (lib/kb): catalogs and detail files read
 * together, cross-checked (rows against files, triggers against the
 * files' triggers).  The input is a small tree of files, each after a
 * line "=== <path>"; the .kopt among them, when it loads, is the
 * settings (otherwise a fixed one), and every check runs over the tree.
 */
#include "fuzz.h"

#include "buf.h"
#include "config.h"
#include "kb.h"
#include "strvec.h"

struct tree {
	struct kopt_strvec paths;
	const char **data;
	size_t *len;
	size_t nr;
};

static int tree_read(void *data, const char *path, struct kopt_buf *out)
{
	const struct tree *t = data;
	size_t i;

	for (i = t->nr; i-- > 0;) {
		if (!strcmp(t->paths.v[i], path)) {
			kopt_buf_add(out, t->data[i], t->len[i]);
			return 0;
		}
	}
	return KOPT_ENOTFOUND;
}

static int tree_list(void *data, const char *dir, struct kopt_strvec *out)
{
	const struct tree *t = data;
	size_t i, n = strlen(dir);

	for (i = 0; i < t->nr; i++)
		if (!strncmp(t->paths.v[i], dir, n) &&
		    (!n || t->paths.v[i][n] == '/'))
			kopt_strvec_push(out, t->paths.v[i]);
	return 0;
}

static const char fixed_kopt[] =
	"[kopt]\n\tknowledge = docs/knowledge\n"
	"[trial \"decode\"]\n\tb = 32\n\ts = 1\n\tt = 4096\n"
	"[language \"cuda-c\"]\n\tcontrol = thread\n"
	"[language \"cute-dsl\"]\n\tcontrol = warp\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tree t = { KOPT_STRVEC_INIT, NULL, NULL, 0 };
	struct kopt_config cfg = KOPT_CONFIG_INIT;
	struct kopt_kb_source src;
	struct kopt_kb kb = KOPT_KB_INIT;
	struct kopt_buf id = KOPT_BUF_INIT;
	char *text = fuzz_copy(data, size, 1), *p = text, *end = text + size;
	const char *kopt = NULL;
	size_t kopt_len = 0, i, alloc = 0;

	fuzz_init();
	/* cut the input into files */
	while (p < end) {
		char *nl, *next;
		if (strncmp(p, "=== ", 4)) {
			next = strstr(p, "\n=== ");
			p = next ? next + 1 : end;
			continue;
		}
		nl = memchr(p, '\n', end - p);
		if (!nl)
			break;
		*nl = '\0';
		next = strstr(nl + 1, "\n=== ");
		next = next ? next + 1 : end;
		KOPT_ALLOC_GROW(t.data, t.nr + 1, alloc);
		t.len = kopt_realloc(t.len, alloc * sizeof(*t.len));
		kopt_strvec_push(&t.paths, p + 4);
		t.data[t.nr] = nl + 1;
		t.len[t.nr] = next - (nl + 1);
		if (!strcmp(p + 4, ".kopt")) {
			kopt = nl + 1;
			kopt_len = t.len[t.nr];
		}
		t.nr++;
		p = next;
	}
	if (!kopt || kopt_config_load_buf(&cfg, kopt, kopt_len, ".kopt")) {
		memset(&cfg, 0, sizeof(cfg));
		if (kopt_config_load_buf(&cfg, fixed_kopt, sizeof(fixed_kopt) - 1,
					 ".kopt"))
			abort();
	}
	src.read = tree_read;
	src.list = tree_list;
	src.data = &t;
	kopt_kb_load(&kb, &src, &cfg, NULL);
	for (i = 0; i < kb.entries_nr; i++) {
		kopt_buf_reset(&id);
		kopt_kb_entry_id(&id, &kb.entries[i]);
	}
	kopt_kb_release(&kb);
	kopt_kb_load(&kb, &src, &cfg, "cuda-c");
	kopt_kb_release(&kb);

	kopt_config_release(&cfg);
	kopt_strvec_clear(&t.paths);
	free(t.data);
	free(t.len);
	kopt_buf_release(&id);
	free(text);
	return 0;
}
