/*
 * The order of a graph's nodes: see order.h.
 */
#include <stdlib.h>

#include "order.h"
#include "../banned.h"

int kopt_graph_order(size_t n, const size_t *from, const size_t *to,
		     size_t n_edges, size_t *order)
{
	size_t *indeg = calloc(n ? n : 1, sizeof(*indeg));
	unsigned char *done = calloc(n ? n : 1, 1);
	size_t placed = 0;
	int ret = -1;

	if (!indeg || !done)
		goto out;
	for (size_t e = 0; e < n_edges; e++) {
		if (from[e] >= n || to[e] >= n)
			goto out;
		indeg[to[e]]++;
	}
	while (placed < n) {
		size_t i = 0;
		while (i < n && (done[i] || indeg[i]))
			i++;
		if (i == n)
			goto out;	/* a cycle */
		done[i] = 1;
		order[placed++] = i;
		for (size_t e = 0; e < n_edges; e++)
			if (from[e] == i)
				indeg[to[e]]--;
	}
	ret = 0;
out:
	free(indeg);
	free(done);
	return ret;
}
