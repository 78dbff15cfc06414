# topoplan: one non-recursive Makefile.
#   make            build build/topoplan, libtopoplan.a and .so, man pages
#   make install    PREFIX=/usr/local DESTDIR= (and make uninstall)
#   make demo       plan a built-in topology (installs build dependencies if missing)
#   make check      every test: unit, golden, errors, JSON schemas, fuzz replay, header, lint, format,
#                   conformance ratchet, package (exports, man page, staged install,
#                   examples, Python), then the same under ASan+UBSan
#                   (also valgrind: unit tests and golden runs, leak-checked)

SHELL   := /bin/bash
CC      ?= cc
BUILD   ?= build
PKGS    := expat cmocka
WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wvla \
           -Wformat=2
CFLAGS  ?= -O2 -g
ALL_CFLAGS := -std=c17 -D_GNU_SOURCE $(WARN) $(CFLAGS) -Iinclude -Isrc/lib -fvisibility=hidden
LDLIBS  := -lexpat -lz -lm

# Versions come from the header (one place): TOPOPLAN_VERSION, TOPOPLAN_SOVERSION.
VERSION   := $(shell sed -n 's/^\#define TOPOPLAN_VERSION "\(.*\)"/\1/p' include/topoplan.h)
SOVERSION := $(shell sed -n 's/^\#define TOPOPLAN_SOVERSION \([0-9]*\)/\1/p' include/topoplan.h)
SONAME    := libtopoplan.so.$(SOVERSION)
SO_REAL   := libtopoplan.so.$(VERSION)
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR     ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig

LIB_SRC := $(sort $(wildcard src/lib/*/*.c src/lib/*/*/*.c))
LIB_HDR := $(sort $(wildcard src/lib/*/*.h src/lib/*/*/*.h))
CLI_SRC := $(sort $(wildcard src/cli/*.c))
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
BUILTIN_XML := $(sort $(wildcard builtins/*.xml))
SKU_CONF := $(sort $(wildcard skus/*.conf))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/builtins_data.o $(BUILD)/gen/skus_data.o
# Library objects go into the shared library too: position-independent.
$(LIB_OBJ): ALL_CFLAGS += -fPIC
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
FUZZ_TARGETS := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN := $(FUZZ_TARGETS:%=$(BUILD)/tests/replay_%)
DEPS_STAMP := $(BUILD)/.deps-ok
CONFORMANCE := ../shared/conformance/run

.PHONY: check-verify install uninstall check-package check-provider fuzz check-search-diff check-search-diff-versions all deps demo check check-unit check-golden check-errors check-nccl-errors check-notes check-json check-pictures check-fuzz check-output check-header \
        check-lint check-report check-report-quick check-conformance check-conformance-2.27.5 check-conformance-2.30.7 check-explain check-san check-valgrind bench fuzz format-check clean

all: $(BUILD)/topoplan $(BUILD)/libtopoplan.a $(BUILD)/$(SO_REAL) $(BUILD)/$(SONAME) $(BUILD)/libtopoplan.so \
     $(BUILD)/topoplan.1 $(BUILD)/topoplan.3

deps: $(DEPS_STAMP)
$(DEPS_STAMP): scripts/install-deps.sh
	@sh scripts/install-deps.sh
	@mkdir -p $(@D) && touch $@

$(BUILD)/%.o: %.c $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/gen/builtins_data.c: $(BUILTIN_XML) scripts/embed-builtins.sh
	@mkdir -p $(@D)
	sh scripts/embed-builtins.sh $@ $(BUILTIN_XML)

$(BUILD)/gen/builtins_data.o: $(BUILD)/gen/builtins_data.c
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/gen/skus_data.c: $(SKU_CONF) scripts/embed-skus.sh
	@mkdir -p $(@D)
	sh scripts/embed-skus.sh $@ $(SKU_CONF)

$(BUILD)/gen/skus_data.o: $(BUILD)/gen/skus_data.c src/lib/provider/sku.h
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/libtopoplan.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

# Graphviz (SVG rendering) is the CLI's alone: the library writes DOT text.
GVC_CFLAGS = $(shell pkg-config --cflags libgvc)
# Graphviz is loaded by render.c when a picture is drawn (dlopen), not linked: every run
# would pay for mapping it. Its SONAME, read here, is the file render.c opens.
GVC_SONAME = $(shell objdump -p $$(pkg-config --variable=libdir libgvc)/libgvc.so 2>/dev/null | sed -n 's/ *SONAME *//p')
GVC_LIBS = -ldl
$(BUILD)/src/cli/render.o: ALL_CFLAGS += $(GVC_CFLAGS) $(if $(GVC_SONAME),-DTP_GVC_SONAME='"$(GVC_SONAME)"')

$(BUILD)/topoplan: $(CLI_OBJ) $(BUILD)/libtopoplan.a
	$(CC) $(ALL_CFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libtopoplan.a $(LDLIBS) $(GVC_LIBS) -pthread

$(BUILD)/tests/test_%: tests/unit/test_%.c tests/unit/helpers.c tests/unit/helpers.h $(BUILD)/libtopoplan.a
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Wno-missing-prototypes -Itests/unit -o $@ $< tests/unit/helpers.c \
	    $(BUILD)/libtopoplan.a $(LDLIBS) -lcmocka

$(BUILD)/tests/replay_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_common.h tests/fuzz/standalone.c $(BUILD)/libtopoplan.a
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Wno-missing-prototypes -o $@ $< tests/fuzz/standalone.c \
	    $(BUILD)/libtopoplan.a $(LDLIBS)

$(BUILD)/bench/%: bench/%.c $(BUILD)/libtopoplan.a
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libtopoplan.a $(LDLIBS)

demo: $(BUILD)/topoplan
	$(BUILD)/topoplan plan --builtin dgx-h100 --nodes 2
	$(BUILD)/topoplan search --builtin dgx-h100 --nodes 2

check: check-unit check-golden check-errors check-nccl-errors check-notes check-json check-pictures check-fleet check-output check-verify check-report-quick check-fuzz check-header check-lint format-check \
       check-conformance check-conformance-2.27.5 check-conformance-2.30.7 check-explain check-provider check-search-diff check-package check-valgrind \
       check-san

check-unit: $(UNIT_BIN)
	@set -e; for t in $(UNIT_BIN); do echo "== $$t"; $$t; done

check-golden: $(BUILD)/topoplan
	@sh tests/golden/run.sh $(BUILD)/topoplan
	@sh tests/golden/job_line.sh $(BUILD)/topoplan

check-fleet: $(BUILD)/topoplan
	@sh tests/fleet/run.sh $(BUILD)/topoplan
	@python3 tests/fleet/sharing.py $(BUILD)/topoplan

# Output files (-o, complete -o, tune --plot, dump files) replaced only on success.
check-output: $(BUILD)/topoplan
	@sh tests/output/run.sh $(BUILD)/topoplan

# What every command says on stderr: setting notes, provider lints, never inside a report line.
check-notes: $(BUILD)/topoplan
	@sh tests/notes/run.sh $(BUILD)/topoplan

check-errors: $(BUILD)/topoplan
	@sh tests/errors/run.sh $(BUILD)/topoplan
	@sh tests/errors/env_edges.sh $(BUILD)/topoplan

# verify: the shared job logs' verdicts, altered logs found and attributed, every public
# conformance case's own log agreeing for its rank (~25 s)
check-verify: $(BUILD)/topoplan
	@sh tests/verify/run.sh $(BUILD)/topoplan

# NCCL 2.22.3's own failures while loading topology and graph files: its WARN and back-trace lines.
check-nccl-errors: $(BUILD)/topoplan
	@sh tests/nccl-errors/run.sh $(BUILD)/topoplan

# Every command's JSON on the public cases against schemas/ (docs/json.md).
# Debian's python3-jsonschema lives in the system interpreter.
JSON_PYTHON ?= $(shell [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import jsonschema' 2>/dev/null \
                 && echo /usr/bin/python3 || echo python3)
# plan --format svg of every distinct public topology renders (Graphviz, no errors).
check-pictures: $(BUILD)/topoplan
	@if [ -d ../shared/conformance/cases ]; then sh tests/pictures/render.sh $(BUILD)/topoplan; \
	else echo "conformance cases not found: pictures skipped"; fi

# topoplan report pages of the public real_* topologies and the heterogeneous jobs (and one
# of 64 nodes, and check --report pages) in headless Chromium: DOM checks, screenshots in
# build/report-shots/. Not in `make check`: 51 pages take about 5 minutes on a loaded machine.
# make check opens a few pages (two real machines, one with 32 NICs, one under each other profile, a degraded-node job,
# its check page and its own page against the baseline: about 25 s); check-report opens every one.
REPORT_QUICK := real_oci_h100 real_aws_p5_2023_32nets hetero_dgx_h100_gpu3_x8_nodes2 _nccl_
check-report-quick: $(BUILD)/topoplan $(BUILD)/$(SONAME)
	@if [ -d ../shared/conformance/cases ]; then \
	  TOPOPLAN_LIBRARY=$(BUILD)/$(SONAME) python3 tests/report/check_report.py $(BUILD)/topoplan \
	    ../shared/conformance/cases $(REPORT_QUICK); \
	else echo "conformance cases not found: report pages skipped"; fi

check-report: $(BUILD)/topoplan $(BUILD)/$(SONAME)
	@if [ -d ../shared/conformance/cases ]; then \
	  TOPOPLAN_LIBRARY=$(BUILD)/$(SONAME) python3 tests/report/check_report.py $(BUILD)/topoplan \
	    ../shared/conformance/cases; \
	else echo "conformance cases not found: report pages skipped"; fi

check-json: $(BUILD)/topoplan
	@if [ -d ../shared/conformance/cases ]; then \
	    $(JSON_PYTHON) tests/json/validate.py $(BUILD)/topoplan schemas ../shared/conformance/cases; \
	else echo "conformance cases not found: JSON schema test skipped"; fi

# Every corpus and every regression input (tests/fuzz/regress/TARGET: inputs that once crashed).
check-fuzz: $(FUZZ_BIN)
	@set -e; for t in $(FUZZ_TARGETS); do \
	    dirs=tests/fuzz/corpus/$$t; [ -d tests/fuzz/regress/$$t ] && dirs="$$dirs tests/fuzz/regress/$$t"; \
	    printf '%-10s ' $$t; $(BUILD)/tests/replay_$$t $$dirs; done

check-header: $(DEPS_STAMP)
	@mkdir -p $(BUILD)
	$(CC) -std=c17 -pedantic -Wall -Wextra -Werror -Iinclude -c tests/headertest.c -o $(BUILD)/headertest.o
	c++ -x c++ -std=c++17 -pedantic -Wall -Wextra -Werror -Iinclude -c tests/headertest.c -o $(BUILD)/headertest-cxx.o

check-lint:
	@sh scripts/lint-includes.sh

check-conformance: $(BUILD)/topoplan
	@if [ -x $(CONFORMANCE) ]; then \
	    set -o pipefail; $(CONFORMANCE) --jobs 2 --require tests/conformance-pass.txt $(BUILD)/topoplan | tail -n 4; \
	else echo "conformance suite not found at $(CONFORMANCE): skipped"; fi

# NCCL 2.27.5's suite (the runner passes --nccl 2.27.5): the cases that pass stay passing.
check-conformance-2.27.5: $(BUILD)/topoplan
	@if [ -x $(CONFORMANCE) ] && [ -d ../shared/conformance/nccl-2.27.5/cases ]; then \
	    set -o pipefail; $(CONFORMANCE) --jobs 2 --cases ../shared/conformance/nccl-2.27.5/cases \
	        --require tests/conformance-pass-2.27.5.txt $(BUILD)/topoplan | tail -n 4 | \
	        sed -E 's/^([0-9]+) passed, ([0-9]+) failed$$/NCCL 2.27.5 (partial profile): \1 cases pass, \2 not yet exact; the ratchet above is what must pass/'; \
	else echo "NCCL 2.27.5 conformance suite not found: skipped"; fi

# NCCL 2.30.7's suite, the same way (tests/conformance-pass-2.30.7.txt).
check-conformance-2.30.7: $(BUILD)/topoplan
	@if [ -x $(CONFORMANCE) ] && [ -d ../shared/conformance/nccl-2.30.7/cases ]; then \
	    set -o pipefail; $(CONFORMANCE) --jobs 2 --cases ../shared/conformance/nccl-2.30.7/cases \
	        --require tests/conformance-pass-2.30.7.txt $(BUILD)/topoplan | tail -n 4 | \
	        sed -E 's/^([0-9]+) passed, ([0-9]+) failed$$/NCCL 2.30.7 (partial profile): \1 cases pass, \2 not yet exact; the ratchet above is what must pass/'; \
	else echo "NCCL 2.30.7 conformance suite not found: skipped"; fi

# Every public case: each graph's explanation agrees with its decision trace and final graph.
check-explain: $(BUILD)/topoplan
	@if [ -d ../shared/conformance/cases ]; then \
	    python3 tests/explain/check_whys.py $(BUILD)/topoplan ../shared/conformance/cases; \
	else echo "conformance cases not found: explanation check skipped"; fi

# Partial-file messages and lints; `complete` on the published provider files
# against their completed cases (~15 s).
check-provider: $(BUILD)/topoplan
	@sh tests/provider/messages.sh $(BUILD)/topoplan
	@bash tests/provider/run.sh $(BUILD)/topoplan

# The optimised search against the step-by-step one on every conformance topology.
$(BUILD)/tests/search_diff: tests/tools/search_diff.c $(BUILD)/libtopoplan.a
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libtopoplan.a $(LDLIBS)

check-search-diff: $(BUILD)/tests/search_diff
	@if [ -d ../shared/conformance/cases ]; then \
	    $(BUILD)/tests/search_diff ../shared/conformance/cases/*/topo.xml; \
	else echo "conformance cases not found: search-diff skipped"; fi

# The same under every other profile on its suite's topologies (~4 min: not in check; the
# modern profiles' accelerators are covered there by test_search_modern_accel_exact).
check-search-diff-versions: $(BUILD)/tests/search_diff
	@set -e; for suite in ../shared/conformance/nccl-*/cases; do \
	    [ -f "$$suite/NCCL_VERSION" ] || continue; \
	    echo "NCCL $$(cat $$suite/NCCL_VERSION):"; \
	    $(BUILD)/tests/search_diff --nccl "$$(cat $$suite/NCCL_VERSION)" $$suite/*/topo.xml; \
	done

check-san: $(DEPS_STAMP)
	$(MAKE) --no-print-directory BUILD=build-san CFLAGS="-O1 -g -DTP_CHECK_INVARIANTS -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	    check-fuzz check-unit check-golden check-errors check-nccl-errors

check-valgrind: $(UNIT_BIN) $(BUILD)/topoplan
	@set -e; for t in $(UNIT_BIN); do valgrind -q --error-exitcode=9 --leak-check=full $$t; done
	@TOPOPLAN_WRAP="valgrind -q --error-exitcode=9 --leak-check=full" sh tests/golden/run.sh $(BUILD)/topoplan
	@TOPOPLAN_WRAP="valgrind -q --error-exitcode=9 --leak-check=full" sh tests/nccl-errors/run.sh $(BUILD)/topoplan

# libFuzzer builds (clang): `make fuzz` builds build-fuzz/fuzz_TARGET for every
# tests/fuzz/fuzz_TARGET.c; `make fuzz FUZZ_SECONDS=N` also runs each for N seconds
# (one at a time, nice'd) on a working copy of its corpus, with its dictionary
# (tests/fuzz/dict/TARGET.dict) when there is one. Findings land in
# build-fuzz/crashes/TARGET/: fix them, then add the input to tests/fuzz/regress/TARGET/.
# With the invariant checks (as check-san): a broken invariant aborts like a crash.
FUZZ_CFLAGS := -std=c17 -D_GNU_SOURCE -g -O1 -DTP_CHECK_INVARIANTS -Iinclude -Isrc/lib \
               -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_SECONDS ?=
fuzz: $(DEPS_STAMP) $(BUILD)/gen/builtins_data.c $(BUILD)/gen/skus_data.c
	@mkdir -p build-fuzz
	@set -e; for t in $(FUZZ_TARGETS); do \
	    clang $(FUZZ_CFLAGS) -o build-fuzz/fuzz_$$t tests/fuzz/fuzz_$$t.c $(LIB_SRC) \
	        $(BUILD)/gen/builtins_data.c $(BUILD)/gen/skus_data.c -lexpat -lz -lm -lpthread; \
	    echo "built build-fuzz/fuzz_$$t"; done
	@if [ -n "$(FUZZ_SECONDS)" ]; then set -e; for t in $(FUZZ_TARGETS); do \
	    mkdir -p build-fuzz/corpus/$$t build-fuzz/crashes/$$t; \
	    cp -n tests/fuzz/corpus/$$t/* build-fuzz/corpus/$$t/ 2>/dev/null || true; \
	    dict=; [ -f tests/fuzz/dict/$$t.dict ] && dict=-dict=tests/fuzz/dict/$$t.dict; \
	    echo "== fuzz_$$t for $(FUZZ_SECONDS) s"; \
	    nice build-fuzz/fuzz_$$t $$dict -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=300 \
	        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=build-fuzz/crashes/$$t/ \
	        build-fuzz/corpus/$$t >build-fuzz/fuzz_$$t.log 2>&1 \
	        || echo "fuzz_$$t: FINDING (build-fuzz/fuzz_$$t.log, build-fuzz/crashes/$$t/)"; \
	    grep -E '^#[0-9]+.*(DONE|cov:)|number_of_executed_units|SUMMARY' build-fuzz/fuzz_$$t.log | tail -n 3; \
	    done; fi

bench: $(BUILD)/topoplan
	@sh bench/run.sh

format-check:
	@clang-format --dry-run -Werror $(LIB_SRC) $(LIB_HDR) $(CLI_SRC) $(wildcard src/cli/*.h) include/topoplan.h && echo "format-check: clean"

clean:
	rm -rf build build-san build-fuzz

# ---- The library as a package: shared library, install, pkg-config, man pages ----
# One man page per @defgroup of the header: topoplan_plan(3), topoplan_query(3), ...
MAN3_GROUPS := $(shell sed -n 's/.*@defgroup \([a-z0-9_]*\).*/\1/p' include/topoplan.h)
INSTALL_FILES := $(BINDIR)/topoplan $(INCLUDEDIR)/topoplan.h $(LIBDIR)/libtopoplan.a \
    $(LIBDIR)/$(SO_REAL) $(LIBDIR)/$(SONAME) $(LIBDIR)/libtopoplan.so \
    $(PKGCONFIGDIR)/topoplan.pc $(MANDIR)/man1/topoplan.1 $(MANDIR)/man3/topoplan.3 \
    $(addprefix $(MANDIR)/man3/topoplan_,$(addsuffix .3,$(MAN3_GROUPS)))

# Only TP_API symbols are exported (-fvisibility=hidden); --no-undefined: every
# dependency is named here, so users link with -ltopoplan alone.
$(BUILD)/$(SO_REAL): $(LIB_OBJ)
	$(CC) $(CFLAGS) -shared -Wl,-soname,$(SONAME) -Wl,--no-undefined -o $@ $^ $(LDLIBS)

$(BUILD)/$(SONAME) $(BUILD)/libtopoplan.so: $(BUILD)/$(SO_REAL)
	ln -sf $(SO_REAL) $@

# topoplan(1) is the binary's own help texts (it cannot drift from --help).
$(BUILD)/topoplan.1: $(BUILD)/topoplan scripts/gen-man.sh
	sh scripts/gen-man.sh $(BUILD)/topoplan > $@.tmp && mv $@.tmp $@

$(BUILD)/topoplan.3: include/topoplan.h scripts/gen-man3.sh
	@mkdir -p $(@D)
	sh scripts/gen-man3.sh include/topoplan.h $(VERSION) $(BUILD)/man3 && cp $(BUILD)/man3/topoplan.3 $@

# The .pc names the install's own directories: written at install time.
PC_SED := -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
          -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|'

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(LIBDIR) \
	    $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3
	install -m 755 $(BUILD)/topoplan $(DESTDIR)$(BINDIR)/topoplan
	install -m 644 include/topoplan.h $(DESTDIR)$(INCLUDEDIR)/topoplan.h
	install -m 644 $(BUILD)/libtopoplan.a $(DESTDIR)$(LIBDIR)/libtopoplan.a
	install -m 755 $(BUILD)/$(SO_REAL) $(DESTDIR)$(LIBDIR)/$(SO_REAL)
	ln -sf $(SO_REAL) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libtopoplan.so
	sed $(PC_SED) topoplan.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/topoplan.pc
	install -m 644 $(BUILD)/topoplan.1 $(DESTDIR)$(MANDIR)/man1/topoplan.1
	install -m 644 $(BUILD)/topoplan.3 $(DESTDIR)$(MANDIR)/man3/topoplan.3
	install -m 644 $(addprefix $(BUILD)/man3/topoplan_,$(addsuffix .3,$(MAN3_GROUPS))) $(DESTDIR)$(MANDIR)/man3/
	@case "$(LIBDIR)" in /usr/lib|/usr/lib64|/lib|/lib64|/usr/lib/*-linux-gnu) ;; *) \
	    echo "note: $(LIBDIR) may not be on the dynamic loader's path: run 'sudo ldconfig' if it is listed"; \
	    echo "      in /etc/ld.so.conf.d (Debian lists /usr/local/lib), else LD_LIBRARY_PATH=$(LIBDIR);"; \
	    echo "      pkg-config: PKG_CONFIG_PATH=$(PKGCONFIGDIR); man: MANPATH=$(MANDIR):; Python: pip install ./python";; esac

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALL_FILES))

# The package as a user gets it: exports, man page, install into a staging
# directory, examples built there with pkg-config alone, Python tests.
STAGE := $(abspath $(BUILD)/stage)
check-package: all
	@rc=0; sh tests/package/check-exports.sh $(BUILD)/$(SO_REAL) $(SONAME) include/topoplan.h || rc=1; \
	sh tests/package/check-api-tested.sh include/topoplan.h || rc=1; \
	sh tests/package/check-man.sh $(BUILD)/topoplan $(BUILD)/topoplan.1 || rc=1; \
	sh tests/package/check-man3.sh include/topoplan.h $(BUILD)/man3 || rc=1; \
	sh tests/package/check-install.sh "$(MAKE)" $(STAGE) $(BUILD) || rc=1; \
	sh tests/package/check-python-package.sh "$(MAKE)" $(BUILD) || rc=1; exit $$rc

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d)
