#ifndef KOPT_TERM_PROGRESS_H
#define KOPT_TERM_PROGRESS_H

/*
 * The terminal renderer of lib/progress: one line on stderr, redrawn in
 * place ("profiling mla-decode v3:  33% (2/6), 4.1 s, trial decode"),
 * finished with ", done." and a newline.  Nothing is drawn when stderr is
 * not a terminal, when a step is given -q, or for work that ends within
 * the delay (1 s; KOPT_PROGRESS_DELAY=<seconds> changes it, as
 * GIT_PROGRESS_DELAY does for git).  KOPT_PROGRESS=0 turns it off and
 * KOPT_PROGRESS=1 draws on a stderr that is not a terminal (tests).
 */

/* main() calls it with 1; a step given -q calls it with 0. */
void kopt_progress_terminal(int enable);

#endif
