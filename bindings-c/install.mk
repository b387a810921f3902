# make install / uninstall, the installed command (tools/pinarena.in: pinarena exec, info, demo), the C
# doctor (tools/pinarena_info.c) and their tests. Included by the Makefile.
#   make install   [PREFIX=/usr/local] [DESTDIR=] [LIBDIR=$(PREFIX)/lib] ...
#   make uninstall (the same variables): removes exactly the files install wrote, and the folders it made
#                  when they are left empty
#   make install-test   installs into a temporary prefix and builds and runs a program against it (tests/install)
#   make package   [PACKAGE_DIR=$(BUILD)/package]: pinarena_<version>_amd64.deb (tools/make-deb.sh builds it)
#   make deb-test  installs that package into a clean Debian root (tests/install/deb-test.sh)
# What lands where (the layout bindings-c/README.md documents):
#   $(LIBDIR)/libpinarena.so.0, libpinarena.so -> libpinarena.so.0, $(LIBDIR)/pkgconfig/pinarena.pc
#   $(LIBDIR)/pinarena/  the helper libraries the Java side loads (windows, verbs loopback, hooks alone)
#   $(INCLUDEDIR)/pinarena.h      $(BINDIR)/pinarena        $(MANDIR)/man1/pinarena.1
#   $(LIBEXECDIR)/pinarena/pinarena-info, pinarena-stale-demo     $(DATADIR)/pinarena/stacks.tsv
PREFIX     ?= /usr/local
DESTDIR    ?=
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR     ?= $(PREFIX)/bin
LIBEXECDIR ?= $(PREFIX)/libexec
DATADIR    ?= $(PREFIX)/share
MANDIR     ?= $(DATADIR)/man
VERSION    := $(shell cat VERSION)
INSTALL    ?= install

INFO     := $(BUILD)/pinarena-info
COMMAND  := $(BUILD)/pinarena
MANPAGE  := $(BUILD)/pinarena.1
HELP_TXT := tools/pinarena-help.txt
JAVA_HELPERS := $(MW_SO) $(VL_SO) $(HOOKS_SO)

.PHONY: install uninstall install-test package deb-test
all: $(INFO) $(COMMAND) $(MANPAGE)

# The C doctor, linked to the shim (so it reports what the shim itself chooses). Built with the build tree's
# run path; make install links it again with the installed one.
# INFO_LINK(run path, output)
INFO_LINK = $(CC) -Iinclude $(CFLAGS) -DPINARENA_VERSION=\"$(VERSION)\" -o $(2) tools/pinarena_info.c -L$(BUILD) -Wl,-rpath,$(1) -lpinarena -ldl
$(INFO): tools/pinarena_info.c include/pinarena.h $(SHIM)
	$(call INFO_LINK,$(abspath $(BUILD)),$@)

# The command for the build tree: its paths point here (../pinarena exec and info use it).
$(COMMAND): tools/pinarena.in $(HELP_TXT) VERSION install.mk
	$(call SUBST_COMMAND,$(abspath $(BUILD)),$(abspath $(BUILD)),$(abspath .),$@)
	chmod 755 $@

# SUBST_COMMAND(libdir, libexec folder, data folder, output)
SUBST_COMMAND = sed -e 's|@LIBDIR@|$(1)|g' -e 's|@PKGLIBEXECDIR@|$(2)|g' -e 's|@PKGDATADIR@|$(3)|g' \
                    -e 's|@VERSION@|$(VERSION)|g' -e '/@HELP@/{r $(HELP_TXT)' -e 'd}' tools/pinarena.in > $(4)

# man-style help: the --help text as a manual page.
$(MANPAGE): $(HELP_TXT) VERSION install.mk
	@mkdir -p $(dir $@)
	{ echo '.TH PINARENA 1 "" "pinarena $(VERSION)" "User Commands"'; \
	  echo '.SH NAME'; echo 'pinarena \- run programs and MPI jobs on pinned (registered) memory'; \
	  echo '.SH DESCRIPTION'; echo '.nf'; sed -e 's/\\/\\e/g' -e 's/^\./\\\&./' $(HELP_TXT); echo '.fi'; } > $@

install: $(SHIM) $(JAVA_HELPERS) $(INFO) $(STALE_DEMO) $(MANPAGE) include/pinarena.h pinarena.pc.in stacks.tsv
	$(INSTALL) -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(LIBDIR)/pinarena $(DESTDIR)$(INCLUDEDIR) \
	  $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBEXECDIR)/pinarena $(DESTDIR)$(DATADIR)/pinarena $(DESTDIR)$(MANDIR)/man1
	$(INSTALL) -m 755 $(SHIM) $(DESTDIR)$(LIBDIR)/$(SHIM_SONAME)
	ln -sfn $(SHIM_SONAME) $(DESTDIR)$(LIBDIR)/libpinarena.so
	$(INSTALL) -m 755 $(JAVA_HELPERS) $(DESTDIR)$(LIBDIR)/pinarena/
	$(INSTALL) -m 644 include/pinarena.h $(DESTDIR)$(INCLUDEDIR)/pinarena.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	    -e 's|@VERSION@|$(VERSION)|' pinarena.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/pinarena.pc
	$(call INFO_LINK,$(LIBDIR),$(DESTDIR)$(LIBEXECDIR)/pinarena/pinarena-info)
	$(INSTALL) -m 755 $(STALE_DEMO) $(DESTDIR)$(LIBEXECDIR)/pinarena/pinarena-stale-demo
	$(INSTALL) -m 644 stacks.tsv $(DESTDIR)$(DATADIR)/pinarena/stacks.tsv
	$(call SUBST_COMMAND,$(LIBDIR),$(LIBEXECDIR)/pinarena,$(DATADIR)/pinarena,$(DESTDIR)$(BINDIR)/pinarena)
	chmod 755 $(DESTDIR)$(BINDIR)/pinarena
	$(INSTALL) -m 644 $(MANPAGE) $(DESTDIR)$(MANDIR)/man1/pinarena.1

# The files install writes, one per line (uninstall removes these and nothing else).
INSTALLED = $(LIBDIR)/$(SHIM_SONAME) $(LIBDIR)/libpinarena.so $(LIBDIR)/pkgconfig/pinarena.pc \
            $(addprefix $(LIBDIR)/pinarena/,$(notdir $(JAVA_HELPERS))) $(INCLUDEDIR)/pinarena.h \
            $(BINDIR)/pinarena $(LIBEXECDIR)/pinarena/pinarena-info $(LIBEXECDIR)/pinarena/pinarena-stale-demo \
            $(DATADIR)/pinarena/stacks.tsv $(MANDIR)/man1/pinarena.1
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	-rmdir $(addprefix $(DESTDIR),$(LIBDIR)/pinarena $(LIBEXECDIR)/pinarena $(DATADIR)/pinarena) 2>/dev/null

# Part of make test (and so of mvn verify).
test: install-test
install-test: $(SHIM) $(JAVA_HELPERS) $(INFO) $(STALE_DEMO) $(MANPAGE)
	tests/install/run.sh $(abspath $(BUILD))

PACKAGE_DIR ?= $(BUILD)/package
package: $(SHIM) $(JAVA_HELPERS) $(INFO) $(STALE_DEMO) $(MANPAGE)
	tools/make-deb.sh $(abspath $(BUILD)) $(abspath $(PACKAGE_DIR))

deb-test: package
	tests/install/deb-test.sh $(abspath $(PACKAGE_DIR)) $(abspath $(BUILD))

