# git-kopt: the kernel-optimization cycle as git subcommands.
#
#   make                 build git-kopt (and libkopt-inject.so with CUDA)
#   make test            install missing packages, build, run every test
#   make test-asan       the same under AddressSanitizer and UBSan
#   make fuzz            run each fuzz harness FUZZ_TIME seconds (60), on
#                        FUZZ_JOBS processes at once (1)
#   make test-crash      kill each writing step at every one of its writes
#   make demo            the whole cycle on the bundled example
#   make install PREFIX=/usr/local DESTDIR=
#   make V=1             show the commands
#
# Without the CUDA toolkit everything but the injection library builds.

PREFIX ?= /usr/local
prefix ?= $(PREFIX)
bindir = $(prefix)/bin
datadir = $(prefix)/share/git-kopt
libdir = $(prefix)/lib/git-kopt
mandir = $(prefix)/share/man
DESTDIR ?=

CC ?= cc
CFLAGS ?= -O2 -g
LDFLAGS ?=
BUILD ?= build
PKG_CONFIG ?= pkg-config
INSTALL ?= install
CUDA_HOME ?= /usr/local/cuda

PKGS = libgit2 libcmark-gfm libcurl libcjson liburing
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
# libcurl is loaded by lib/http on the first request (its headers only
# here), so that a run that never connects does not pay for loading it.
PKG_LIBS := $(shell $(PKG_CONFIG) --libs $(filter-out libcurl,$(PKGS)) \
	2>/dev/null) -lcmark-gfm-extensions -lcrypto -ldl -lm

# Start-up.  Loading libgit2, cmark-gfm and the dozen libraries libgit2
# needs costs every process about 2 ms in the dynamic loader, and the
# hooks and the cycle start git-kopt dozens of times.  Where their static
# archives are installed (Debian's -dev packages ship them) they are
# linked in; STATIC=0 links them dynamically.  What lib/gitinit.c spares
# libgit2's start (its TLS set-up, HAVEGE, libssh2) is then a link-time
# wrap, and libgit2's GSS-API (libgssapi_krb5 and six more libraries) is
# loaded by lib/gitinit.c on its first use instead of at every start.
STATIC ?= auto
STATIC_ARCHIVES = git2 mbedtls mbedx509 mbedcrypto http_parser ssh2 crypto \
	pcre2-8 z cmark-gfm-extensions cmark-gfm uring
ifeq ($(STATIC),auto)
STATIC := $(if $(strip $(foreach a,$(STATIC_ARCHIVES),$(if $(filter /%,\
	$(shell $(CC) -print-file-name=lib$(a).a)),,$(a)))),0,1)
endif
ifeq ($(STATIC),1)
PKG_LIBS := -Wl,--wrap=mbedtls_x509_crt_parse_file \
	-Wl,--wrap=mbedtls_havege_init -Wl,--wrap=mbedtls_havege_poll \
	-Wl,--wrap=libssh2_init \
	-Wl,--wrap=git_mbedtls_stream_global_init \
	-Wl,--wrap=git_mbedtls_stream_new -Wl,--wrap=git_mbedtls_stream_wrap \
	-Wl,--wrap=git_mbedtls__set_cert_location \
	-Wl,-Bstatic $(STATIC_ARCHIVES:%=-l%) -Wl,-Bdynamic \
	$(shell $(PKG_CONFIG) --libs libcjson 2>/dev/null) \
	-ldl -lm -lpthread
endif

# The program is linked position-dependent: a position-independent one
# has 400 KiB of pointer tables (mostly the static archives') relocated
# and copied at every start, 1.5 ms a process on a machine whose page
# faults are slow (bench/README.md, analyze, "After (2026-12-04,
# evening)").  PIE=1 links it position-independent.
PIE ?= 0
ifeq ($(PIE),0)
PROGRAM_LDFLAGS = -no-pie
endif

KOPT_CFLAGS = -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror \
	-Wno-missing-field-initializers \
	-Ilib -Icmd -I$(BUILD)/gen $(PKG_CFLAGS) -MMD -MP \
	-DKOPT_SOURCE_DIR='"$(CURDIR)"'
ifeq ($(STATIC),1)
KOPT_CFLAGS += -DKOPT_STATIC_LIBGIT2
endif

# The sanitizer build has its own directory; anything built there is
# built with the sanitizers (make install from a test, say).
ifeq ($(BUILD),build-asan)
SANITIZE = 1
endif

ifdef SANITIZE
KOPT_CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer
LDFLAGS += -fsanitize=address,undefined
endif

# The fuzz harnesses' build (tests/fuzz/README): clang, libFuzzer's
# coverage, ASan and UBSan, any undefined behaviour fatal.
FUZZ_CC ?= clang-14
FUZZ_TIME ?= 60
FUZZ_JOBS ?= 1
FUZZ_BUILD = build-fuzz
ifeq ($(BUILD),$(FUZZ_BUILD))
CC = $(FUZZ_CC)
KOPT_CFLAGS += -fsanitize=fuzzer-no-link,address,undefined \
	-fno-sanitize-recover=all -fno-omit-frame-pointer
endif

ifneq ($(V),1)
QUIET_CC = @echo '   ' CC $@;
QUIET_LINK = @echo '   ' LINK $@;
QUIET_GEN = @echo '   ' GEN $@;
endif

LIB_SRCS := $(sort $(wildcard lib/*.c))
CMD_SRCS := $(sort $(wildcard cmd/*.c))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
CMD_OBJS := $(CMD_SRCS:%.c=$(BUILD)/%.o)
UNIT_SRCS := $(sort $(wildcard tests/unit/*.c))
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%.t)
PROGRAM = $(BUILD)/bin/git-kopt

INJECT_SRCS := $(sort $(wildcard lib/inject/*.c))
INJECT_LIB = lib/inject/libkopt-inject.so
HAVE_CUDA := $(shell test -f $(CUDA_HOME)/include/cupti.h && echo yes)
ifeq ($(HAVE_CUDA),yes)
ifneq ($(INJECT_SRCS),)
ALL_INJECT = $(INJECT_LIB)
endif
endif

all: $(PROGRAM) git-kopt $(ALL_INJECT)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(QUIET_CC)$(CC) $(CFLAGS) $(KOPT_CFLAGS) -c -o $@ $<

# The calibration kernels travel inside the program as PTX text.
$(BUILD)/gen/calibrate_ptx.h: lib/calibrate/calibrate.ptx \
		lib/calibrate/calibrate_sm90a.ptx tools/embed
	@mkdir -p $(dir $@)
	$(QUIET_GEN){ tools/embed calibrate_ptx lib/calibrate/calibrate.ptx && \
	  tools/embed calibrate_sm90a_ptx lib/calibrate/calibrate_sm90a.ptx; } \
	  >$@+ && mv $@+ $@

$(BUILD)/lib/device.o: $(BUILD)/gen/calibrate_ptx.h

$(PROGRAM): $(CMD_OBJS) $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) $(CFLAGS) $(LDFLAGS) $(PROGRAM_LDFLAGS) -o $@ $^ \
		$(PKG_LIBS)

# A copy at the top for running from the source tree.
git-kopt: $(PROGRAM)
	@cp $< $@

# The injection library's window rules need no CUDA: tested everywhere.
$(BUILD)/tests/unit/window.t: $(BUILD)/lib/inject/window.o
$(BUILD)/tests/unit/graph-order.t: $(BUILD)/lib/inject/order.o
$(BUILD)/tests/unit/inject-avail.t: $(BUILD)/lib/inject/avail.o

# Every unit test program can run only the tests KOPT_TEST_FILTER names.
UNIT_SUPPORT = $(BUILD)/tests/unit/support/filter.o
.SECONDARY: $(UNIT_SUPPORT)

$(BUILD)/tests/unit/%.t: tests/unit/%.c $(LIB_OBJS) $(UNIT_SUPPORT)
	@mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) $(CFLAGS) $(KOPT_CFLAGS) $(LDFLAGS) -o $@ $^ \
		$(PKG_LIBS) -lcmocka

# The injection library opens CUPTI itself at run time (a missing CUPTI is
# reported in its output, not a program that fails to start); it looks for
# libcjson beside itself first, then where the system keeps it.
INJECT_CFLAGS = -std=c11 -D_GNU_SOURCE -fPIC -fvisibility=hidden \
	-Wall -Wextra -Werror \
	-I$(CUDA_HOME)/include -I$(CUDA_HOME)/extras/CUPTI/include \
	-Ilib/inject -Ilib/inject/cshim \
	$(shell $(PKG_CONFIG) --cflags libcjson 2>/dev/null)
INJECT_LIBS = -L$(CUDA_HOME)/lib64/stubs -Wl,--no-undefined \
	-Wl,-rpath,'$$ORIGIN' -Wl,-rpath,$(CUDA_HOME)/lib64 \
	-lcuda -lcjson -ldl -lpthread -lm

$(INJECT_LIB): $(INJECT_SRCS) $(wildcard lib/inject/*.h)
	$(QUIET_LINK)$(CC) $(CFLAGS) $(INJECT_CFLAGS) -shared -o $@ \
		$(INJECT_SRCS) $(INJECT_LIBS)

# Known kernels for the GPU tests (tests/gpu/run).
NVCC ?= $(CUDA_HOME)/bin/nvcc
tests/gpu/kernels: tests/gpu/kernels.cu
	$(QUIET_LINK)$(NVCC) -O2 -gencode arch=compute_80,code=sm_80 \
		-gencode arch=compute_90,code=sm_90 -o $@ $< -ldl

# bench/tune: the tuning strategies replayed on a recorded table.
$(BUILD)/bench/tune: bench/tune.c $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) $(CFLAGS) $(KOPT_CFLAGS) $(LDFLAGS) -o $@ $^ \
		$(PKG_LIBS)

bench-tune: $(BUILD)/bench/tune
	$(BUILD)/bench/tune $(wildcard tests/fixtures/tuning/mla-decode-*.tsv)

inject: $(INJECT_LIB)

FUZZ_SRCS := $(sort $(wildcard tests/fuzz/*.c))
FUZZ_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=$(BUILD)/tests/fuzz/%)

$(BUILD)/tests/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz.h $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) $(CFLAGS) $(KOPT_CFLAGS) -Itests/fuzz \
		-fsanitize=fuzzer,address,undefined -o $@ $< $(LIB_OBJS) \
		$(PKG_LIBS)

# Builds the harnesses when clang is there (CI installs it).
fuzz-build:
	@if command -v $(FUZZ_CC) >/dev/null 2>&1; then \
		$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) fuzz-bins; \
	else \
		echo "warning: no $(FUZZ_CC): fuzz harnesses not built" >&2; \
	fi

fuzz-bins: $(FUZZ_BINS)

fuzz: fuzz-build
	@FUZZ_BUILD=$(FUZZ_BUILD) FUZZ_JOBS=$(FUZZ_JOBS) tests/fuzz/run -t $(FUZZ_TIME) $(FUZZ)

deps:
	@tools/install-deps

test: deps
	@$(MAKE) --no-print-directory all $(UNIT_BINS)
	@$(MAKE) --no-print-directory fuzz-build
	@BUILD=$(BUILD) tests/run

test-asan:
	@$(MAKE) --no-print-directory test BUILD=build-asan SANITIZE=1

test-crash: deps
	@$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) KOPT_KILL_POINTS=all KOPT_TEST_TIMEOUT=3600 \
		tests/run tests/cli/crash-*.bats

test-valgrind: deps
	@$(MAKE) --no-print-directory all $(UNIT_BINS)
	@BUILD=$(BUILD) KOPT_VALGRIND=1 tests/run

test-gpu: all tests/gpu/kernels
	@tests/gpu/run $(INJECT_LIB) tests/gpu/kernels

demo: deps
	@$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) tools/demo

install: all
	$(INSTALL) -d $(DESTDIR)$(bindir) $(DESTDIR)$(datadir) \
		$(DESTDIR)$(mandir)/man1 $(DESTDIR)$(datadir)/hooks
	$(INSTALL) -m 755 $(PROGRAM) $(DESTDIR)$(bindir)/git-kopt
	cp -R templates $(DESTDIR)$(datadir)/
	$(INSTALL) -m 755 hooks/* $(DESTDIR)$(datadir)/hooks/
	$(INSTALL) -m 644 Documentation/git-kopt.1 $(DESTDIR)$(mandir)/man1/
	if test -f $(INJECT_LIB); then \
		$(INSTALL) -d $(DESTDIR)$(libdir) && \
		$(INSTALL) -m 755 $(INJECT_LIB) $(DESTDIR)$(libdir)/; \
	fi

clean:
	rm -rf build build-asan $(FUZZ_BUILD) git-kopt $(INJECT_LIB) tests/gpu/kernels

.PHONY: bench-tune all deps test test-asan test-crash test-valgrind test-gpu demo install clean inject \
	fuzz fuzz-build fuzz-bins

-include $(LIB_OBJS:.o=.d) $(CMD_OBJS:.o=.d) $(BUILD)/lib/inject/window.d $(BUILD)/lib/inject/order.d \
	$(BUILD)/lib/inject/avail.d \
	$(UNIT_SUPPORT:.o=.d) $(FUZZ_BINS:=.d) \
	$(UNIT_BINS:.t=.d)
