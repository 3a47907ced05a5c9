/*
 * Graphs launched node by node: what a second run needs to measure the
 * kernels that the first run saw only inside CUDA graphs (inject.h says
 * when and why).  A graph made of kernel, memset, memcpy, empty, event
 * record, event wait and child graph nodes is read at its instantiation:
 * each kernel node's function, launch dimensions, cluster shape and a
 * copy of its parameter values, each memset's and memcpy's parameters,
 * each event node's event, in an order its edges allow, a child graph's
 * nodes in its own order at the child's place (at any depth).  Its
 * launches then become ordinary launches of those kernels, which the
 * Range Profiler can sample, and the same memsets, copies, records and
 * waits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inject.h"
#include "order.h"
#include "../banned.h"

/* graphs with more nodes, child graphs' included, are left to run as graphs */
#define MAX_NODES 4096
/* child graphs inside child graphs: deeper ones are left to run as graphs */
#define MAX_DEPTH 16
/* parameters of one kernel, as CUDA allows at most */
#define MAX_PARAMS 4096

const char *kopt_inject_gnode_kind(CUgraphNodeType t)
{
	switch (t) {
	case CU_GRAPH_NODE_TYPE_KERNEL: return "kernel";
	case CU_GRAPH_NODE_TYPE_MEMCPY: return "memcpy";
	case CU_GRAPH_NODE_TYPE_MEMSET: return "memset";
	case CU_GRAPH_NODE_TYPE_HOST: return "host";
	case CU_GRAPH_NODE_TYPE_GRAPH: return "child graph";
	case CU_GRAPH_NODE_TYPE_EMPTY: return "empty";
	case CU_GRAPH_NODE_TYPE_WAIT_EVENT: return "event wait";
	case CU_GRAPH_NODE_TYPE_EVENT_RECORD: return "event record";
	case CU_GRAPH_NODE_TYPE_MEM_ALLOC: return "memory allocation";
	case CU_GRAPH_NODE_TYPE_MEM_FREE: return "memory free";
	case CU_GRAPH_NODE_TYPE_CONDITIONAL: return "conditional";
	default: return "other";
	}
}

static void gnode_clear(struct kopt_inject_gnode *n)
{
	free(n->name);
	free(n->args);
	free(n->argv);
	n->name = NULL;
	n->args = NULL;
	n->argv = NULL;
	n->n_args = 0;
	n->use_extra = 0;
}

/*
 * The parameter values of a launch, copied: from kernelParams (one
 * pointer per parameter, whose sizes the function tells), or from the
 * one buffer of `extra`.
 */
static int copy_args(struct kopt_inject_gnode *n, void **kernel_params,
		     void **extra, char *why, size_t len)
{
	size_t off, size, end = 0, count = 0;

	if (kernel_params) {
		while (count < MAX_PARAMS &&
		       cuFuncGetParamInfo(n->f, count, &off, &size) ==
		       CUDA_SUCCESS) {
			if (off + size > end)
				end = off + size;
			count++;
		}
		n->args = calloc(1, end ? end : 1);
		n->argv = calloc(count ? count : 1, sizeof(*n->argv));
		if (!n->args || !n->argv) {
			snprintf(why, len, "out of memory");
			return -1;
		}
		for (size_t i = 0; i < count; i++) {
			if (cuFuncGetParamInfo(n->f, i, &off, &size) !=
			    CUDA_SUCCESS || !kernel_params[i]) {
				snprintf(why, len, "parameter %zu of '%s' "
					 "cannot be read", i, n->name);
				return -1;
			}
			memcpy(n->args + off, kernel_params[i], size);
			n->argv[i] = n->args + off;
		}
		n->n_args = count;
		return 0;
	}
	if (extra) {
		const void *buf = NULL;
		size_t buf_size = 0;
		int have_size = 0;

		for (size_t i = 0; i < 16 && extra[i] != CU_LAUNCH_PARAM_END;
		     i += 2) {
			if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
				buf = extra[i + 1];
			} else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE &&
				   extra[i + 1]) {
				buf_size = *(const size_t *)extra[i + 1];
				have_size = 1;
			} else {
				snprintf(why, len, "'%s' takes launch options "
					 "the library does not know", n->name);
				return -1;
			}
		}
		if (!buf || !have_size) {
			snprintf(why, len, "'%s' has a parameter buffer "
				 "without its size", n->name);
			return -1;
		}
		n->args = malloc(buf_size ? buf_size : 1);
		if (!n->args) {
			snprintf(why, len, "out of memory");
			return -1;
		}
		memcpy(n->args, buf, buf_size);
		n->extra_size = buf_size;
		n->use_extra = 1;
		return 0;
	}
	return 0; /* a kernel without parameters */
}

int kopt_inject_gnode_set(struct kopt_inject_gnode *n,
			  const CUDA_KERNEL_NODE_PARAMS *p, char *why,
			  size_t len)
{
	CUfunction f = p->func;
	const char *name = NULL;

	gnode_clear(n);
	n->type = CU_GRAPH_NODE_TYPE_KERNEL;
	if (!f && (!p->kern || cuKernelGetFunction(&f, p->kern) !=
		   CUDA_SUCCESS)) {
		snprintf(why, len, "a kernel node's function cannot be found");
		return -1;
	}
	if (cuFuncGetName(&name, f) != CUDA_SUCCESS || !name ||
	    !(n->name = strdup(name))) {
		snprintf(why, len, "a kernel node's function has no name");
		return -1;
	}
	n->f = f;
	n->grid[0] = p->gridDimX, n->grid[1] = p->gridDimY;
	n->grid[2] = p->gridDimZ;
	n->block[0] = p->blockDimX, n->block[1] = p->blockDimY;
	n->block[2] = p->blockDimZ;
	n->smem = p->sharedMemBytes;
	return copy_args(n, p->kernelParams, p->extra, why, len);
}

/* Kernel node attributes that change how it is launched. */
static void read_attributes(struct kopt_inject_gnode *n)
{
	CUkernelNodeAttrValue v;

	n->cluster[0] = n->cluster[1] = n->cluster[2] = 0;
	n->cooperative = 0;
	memset(&v, 0, sizeof(v));
	if (cuGraphKernelNodeGetAttribute(n->node,
			CU_KERNEL_NODE_ATTRIBUTE_CLUSTER_DIMENSION, &v) ==
	    CUDA_SUCCESS && v.clusterDim.x) {
		n->cluster[0] = v.clusterDim.x;
		n->cluster[1] = v.clusterDim.y;
		n->cluster[2] = v.clusterDim.z;
	}
	memset(&v, 0, sizeof(v));
	if (cuGraphKernelNodeGetAttribute(n->node,
			CU_KERNEL_NODE_ATTRIBUTE_COOPERATIVE, &v) ==
	    CUDA_SUCCESS)
		n->cooperative = v.cooperative;
}

/*
 * The nodes in an order the edges allow (order.h); -1 with why when the
 * edges cannot be read (edges with data: programmatic launches) or make
 * no order.
 */
static int order_nodes(CUgraph graph, CUgraphNode *nodes, size_t n,
		       size_t *order, char *why, size_t len)
{
	size_t n_edges = 0;
	CUgraphNode *from = NULL, *to = NULL;
	size_t *efrom = NULL, *eto = NULL;
	int ret = -1;

	if (cuGraphGetEdges(graph, NULL, NULL, NULL, &n_edges) !=
	    CUDA_SUCCESS) {
		snprintf(why, len, "its edges cannot be read");
		return -1;
	}
	from = calloc(n_edges ? n_edges : 1, sizeof(*from));
	to = calloc(n_edges ? n_edges : 1, sizeof(*to));
	efrom = calloc(n_edges ? n_edges : 1, sizeof(*efrom));
	eto = calloc(n_edges ? n_edges : 1, sizeof(*eto));
	if (!from || !to || !efrom || !eto) {
		snprintf(why, len, "out of memory");
		goto out;
	}
	if (n_edges && cuGraphGetEdges(graph, from, to, NULL, &n_edges) !=
	    CUDA_SUCCESS) {
		snprintf(why, len, "it has edges with data (programmatic "
			 "launches)");
		goto out;
	}
	for (size_t e = 0; e < n_edges; e++) {
		efrom[e] = eto[e] = n;	/* n: not a node of the graph */
		for (size_t i = 0; i < n; i++) {
			if (nodes[i] == from[e])
				efrom[e] = i;
			if (nodes[i] == to[e])
				eto[e] = i;
		}
	}
	if (kopt_graph_order(n, efrom, eto, n_edges, order) < 0) {
		snprintf(why, len, "its edges make no order");
		goto out;
	}
	ret = 0;
out:
	free(from);
	free(to);
	free(efrom);
	free(eto);
	return ret;
}

/* A node kind the library launches itself (or, for a child graph, opens). */
static int known_type(CUgraphNodeType t)
{
	switch (t) {
	case CU_GRAPH_NODE_TYPE_KERNEL:
	case CU_GRAPH_NODE_TYPE_MEMSET:
	case CU_GRAPH_NODE_TYPE_MEMCPY:
	case CU_GRAPH_NODE_TYPE_EMPTY:
	case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
	case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
	case CU_GRAPH_NODE_TYPE_GRAPH:
		return 1;
	default:
		return 0;
	}
}

const char *kopt_inject_gnode_call(CUgraphNodeType t)
{
	switch (t) {
	case CU_GRAPH_NODE_TYPE_KERNEL: return "cuLaunchKernelEx";
	case CU_GRAPH_NODE_TYPE_MEMSET: return "cuMemsetAsync";
	case CU_GRAPH_NODE_TYPE_MEMCPY: return "cuMemcpy3DAsync";
	case CU_GRAPH_NODE_TYPE_EVENT_RECORD: return "cuEventRecord";
	case CU_GRAPH_NODE_TYPE_WAIT_EVENT: return "cuStreamWaitEvent";
	default: return "";
	}
}

int kopt_inject_gnode_disables(CUgraphNodeType t)
{
	return t == CU_GRAPH_NODE_TYPE_KERNEL ||
	       t == CU_GRAPH_NODE_TYPE_MEMSET ||
	       t == CU_GRAPH_NODE_TYPE_MEMCPY;
}

CUresult kopt_inject_graph_enable(CUgraphExec exec,
				  const struct kopt_inject_unrolled *u,
				  unsigned on)
{
	CUresult r;

	for (size_t i = 0; i < u->n; i++) {
		if (!kopt_inject_gnode_disables(u->nodes[i].type))
			continue;
		r = cuGraphNodeSetEnabled(exec, u->nodes[i].node, on);
		if (r == CUDA_SUCCESS || on)
			continue;
		while (i-- > 0)	/* the graph as it was */
			if (kopt_inject_gnode_disables(u->nodes[i].type))
				cuGraphNodeSetEnabled(exec, u->nodes[i].node,
						      1);
		return r;
	}
	return CUDA_SUCCESS;
}

/* Room for one more copy in u; NULL out of memory or past MAX_NODES. */
static struct kopt_inject_gnode *next_gnode(struct kopt_inject_unrolled *u,
					    size_t *cap, char *why,
					    size_t len)
{
	if (u->n == *cap) {
		size_t want = *cap ? 2 * *cap : 16;
		struct kopt_inject_gnode *v;

		if (u->n >= MAX_NODES) {
			snprintf(why, len, "it has more than %d nodes, its "
				 "child graphs' included", MAX_NODES);
			return NULL;
		}
		v = realloc(u->nodes, want * sizeof(*v));
		if (!v) {
			snprintf(why, len, "out of memory");
			return NULL;
		}
		memset(v + *cap, 0, (want - *cap) * sizeof(*v));
		u->nodes = v;
		*cap = want;
	}
	return &u->nodes[u->n];
}

/*
 * The nodes of graph, in an order its edges allow, appended to u; a
 * child graph's own nodes take its place.
 */
static int read_nodes(CUgraph graph, struct kopt_inject_unrolled *u,
		      size_t *cap, int depth, char *why, size_t len)
{
	size_t n = 0, *order = NULL;
	CUgraphNode *nodes = NULL;
	int ret = -1;

	if (depth > MAX_DEPTH) {
		snprintf(why, len, "its child graphs nest deeper than %d",
			 MAX_DEPTH);
		return -1;
	}
	if (cuGraphGetNodes(graph, NULL, &n) != CUDA_SUCCESS) {
		snprintf(why, len, "its nodes cannot be read");
		return -1;
	}
	if (n > MAX_NODES) {
		snprintf(why, len, "it has %zu nodes, more than %d", n,
			 MAX_NODES);
		return -1;
	}
	nodes = calloc(n ? n : 1, sizeof(*nodes));
	order = calloc(n ? n : 1, sizeof(*order));
	if (!nodes || !order) {
		snprintf(why, len, "out of memory");
		goto out;
	}
	if (n && cuGraphGetNodes(graph, nodes, &n) != CUDA_SUCCESS) {
		snprintf(why, len, "its nodes cannot be read");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		CUgraphNodeType t;
		if (cuGraphNodeGetType(nodes[i], &t) != CUDA_SUCCESS) {
			snprintf(why, len, "a node's type cannot be read");
			goto out;
		}
		if (!known_type(t)) {
			snprintf(why, len, "it has a %s node, which the "
				 "library does not launch itself",
				 kopt_inject_gnode_kind(t));
			goto out;
		}
	}
	if (order_nodes(graph, nodes, n, order, why, len) < 0)
		goto out;
	for (size_t k = 0; k < n; k++) {
		CUgraphNode node = nodes[order[k]];
		CUgraphNodeType t;
		CUDA_KERNEL_NODE_PARAMS p;
		struct kopt_inject_gnode *gn;
		CUresult r;

		cuGraphNodeGetType(node, &t);
		if (t == CU_GRAPH_NODE_TYPE_EMPTY)
			continue;
		if (t == CU_GRAPH_NODE_TYPE_GRAPH) {
			CUgraph child;
			/* the embedded copy, whose nodes the executable
			   graph knows (not the graph it was made from) */
			if (cuGraphChildGraphNodeGetGraph(node, &child) !=
			    CUDA_SUCCESS) {
				snprintf(why, len, "a child graph node's graph "
					 "cannot be read");
				goto out;
			}
			if (read_nodes(child, u, cap, depth + 1, why, len) < 0)
				goto out;
			continue;
		}
		if (!(gn = next_gnode(u, cap, why, len)))
			goto out;
		gn->node = node;
		gn->type = t;
		switch (t) {
		case CU_GRAPH_NODE_TYPE_MEMSET:
			r = cuGraphMemsetNodeGetParams(node, &gn->memset);
			break;
		case CU_GRAPH_NODE_TYPE_MEMCPY:
			r = cuGraphMemcpyNodeGetParams(node, &gn->memcpy);
			break;
		case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
			r = cuGraphEventRecordNodeGetEvent(node, &gn->event);
			break;
		case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
			r = cuGraphEventWaitNodeGetEvent(node, &gn->event);
			break;
		default:
			memset(&p, 0, sizeof(p));
			r = cuGraphKernelNodeGetParams(node, &p);
			break;
		}
		if (r != CUDA_SUCCESS) {
			snprintf(why, len, "a %s node's parameters cannot be "
				 "read", kopt_inject_gnode_kind(t));
			goto out;
		}
		u->n++;
		if (t != CU_GRAPH_NODE_TYPE_KERNEL)
			continue;
		if (kopt_inject_gnode_set(gn, &p, why, len) < 0)
			goto out;
		read_attributes(gn);
	}
	ret = 0;
out:
	free(nodes);
	free(order);
	return ret;
}

int kopt_inject_graph_read(CUgraph graph, struct kopt_inject_unrolled *u,
			   char *why, size_t len)
{
	size_t cap = 0;

	memset(u, 0, sizeof(*u));
	*why = '\0';
	if (read_nodes(graph, u, &cap, 0, why, len) < 0) {
		kopt_inject_graph_free(u);
		return -1;
	}
	return 0;
}

void kopt_inject_graph_free(struct kopt_inject_unrolled *u)
{
	for (size_t i = 0; u->nodes && i < u->n; i++)
		gnode_clear(&u->nodes[i]);
	free(u->nodes);
	u->nodes = NULL;
	u->n = 0;
}

static CUresult memset_on(const CUDA_MEMSET_NODE_PARAMS *m, CUstream s)
{
	if (m->height <= 1)
		switch (m->elementSize) {
		case 1: return cuMemsetD8Async(m->dst, (unsigned char)m->value,
					       m->width, s);
		case 2: return cuMemsetD16Async(m->dst,
						(unsigned short)m->value,
						m->width, s);
		case 4: return cuMemsetD32Async(m->dst, m->value, m->width, s);
		default: return CUDA_ERROR_INVALID_VALUE;
		}
	switch (m->elementSize) {
	case 1: return cuMemsetD2D8Async(m->dst, m->pitch,
					 (unsigned char)m->value, m->width,
					 m->height, s);
	case 2: return cuMemsetD2D16Async(m->dst, m->pitch,
					  (unsigned short)m->value, m->width,
					  m->height, s);
	case 4: return cuMemsetD2D32Async(m->dst, m->pitch, m->value,
					  m->width, m->height, s);
	default: return CUDA_ERROR_INVALID_VALUE;
	}
}

CUresult kopt_inject_gnode_launch(const struct kopt_inject_gnode *n,
				  CUstream stream)
{
	CUlaunchConfig cfg;
	CUlaunchAttribute attr[2];
	void *extra[5];

	if (n->type == CU_GRAPH_NODE_TYPE_MEMSET)
		return memset_on(&n->memset, stream);
	if (n->type == CU_GRAPH_NODE_TYPE_MEMCPY)
		return cuMemcpy3DAsync(&n->memcpy, stream);
	if (n->type == CU_GRAPH_NODE_TYPE_EVENT_RECORD)
		return cuEventRecord(n->event, stream);
	if (n->type == CU_GRAPH_NODE_TYPE_WAIT_EVENT)
		return cuStreamWaitEvent(stream, n->event, 0);

	memset(&cfg, 0, sizeof(cfg));
	memset(attr, 0, sizeof(attr));
	cfg.gridDimX = n->grid[0], cfg.gridDimY = n->grid[1];
	cfg.gridDimZ = n->grid[2];
	cfg.blockDimX = n->block[0], cfg.blockDimY = n->block[1];
	cfg.blockDimZ = n->block[2];
	cfg.sharedMemBytes = n->smem;
	cfg.hStream = stream;
	cfg.attrs = attr;
	if (n->cluster[0]) {
		attr[cfg.numAttrs].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
		attr[cfg.numAttrs].value.clusterDim.x = n->cluster[0];
		attr[cfg.numAttrs].value.clusterDim.y = n->cluster[1];
		attr[cfg.numAttrs].value.clusterDim.z = n->cluster[2];
		cfg.numAttrs++;
	}
	if (n->cooperative) {
		attr[cfg.numAttrs].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
		attr[cfg.numAttrs].value.cooperative = 1;
		cfg.numAttrs++;
	}
	if (n->use_extra) {
		extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
		extra[1] = n->args;
		extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
		extra[3] = (void *)&n->extra_size;
		extra[4] = CU_LAUNCH_PARAM_END;
		return cuLaunchKernelEx(&cfg, n->f, NULL, extra);
	}
	return cuLaunchKernelEx(&cfg, n->f, n->argv, NULL);
}
