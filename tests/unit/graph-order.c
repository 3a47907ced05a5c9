#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "inject/order.h"

static void assert_order(const size_t *got, const size_t *want, size_t n)
{
	for (size_t i = 0; i < n; i++)
		assert_int_equal(got[i], want[i]);
}

static void test_chain_and_free_nodes(void **state)
{
	/* 2 -> 0 -> 1; node 3 has no edge: first free node first */
	size_t from[] = { 2, 0 }, to[] = { 0, 1 }, order[4];
	size_t want[] = { 2, 0, 1, 3 };

	(void)state;
	assert_int_equal(kopt_graph_order(4, from, to, 2, order), 0);
	assert_order(order, want, 4);
}

static void test_no_edges_keeps_the_graph_order(void **state)
{
	size_t order[5], want[] = { 0, 1, 2, 3, 4 };

	(void)state;
	assert_int_equal(kopt_graph_order(5, NULL, NULL, 0, order), 0);
	assert_order(order, want, 5);
	assert_int_equal(kopt_graph_order(0, NULL, NULL, 0, order), 0);
}

static void test_diamond(void **state)
{
	/* 3 -> {1, 2} -> 0, given in the graph's order 0..3 */
	size_t from[] = { 3, 3, 2, 1 }, to[] = { 1, 2, 0, 0 }, order[4];
	size_t want[] = { 3, 1, 2, 0 };

	(void)state;
	assert_int_equal(kopt_graph_order(4, from, to, 4, order), 0);
	assert_order(order, want, 4);
}

static void test_refused(void **state)
{
	size_t order[3];
	/* a cycle 0 -> 1 -> 0 beside a free node */
	size_t cf[] = { 0, 1 }, ct[] = { 1, 0 };
	/* an edge to a node the graph does not have */
	size_t of[] = { 0 }, ot[] = { 3 };

	(void)state;
	assert_int_equal(kopt_graph_order(3, cf, ct, 2, order), -1);
	assert_int_equal(kopt_graph_order(3, of, ot, 1, order), -1);
	assert_int_equal(kopt_graph_order(3, ot, of, 1, order), -1);
}

static void test_parallel_edges(void **state)
{
	/* the same edge twice still orders once */
	size_t from[] = { 1, 1 }, to[] = { 0, 0 }, order[2];
	size_t want[] = { 1, 0 };

	(void)state;
	assert_int_equal(kopt_graph_order(2, from, to, 2, order), 0);
	assert_order(order, want, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain_and_free_nodes),
		cmocka_unit_test(test_no_edges_keeps_the_graph_order),
		cmocka_unit_test(test_diamond),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_parallel_edges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
