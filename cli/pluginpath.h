/* SPDX-License-Identifier: MIT */
/*
 * cli/pluginpath.h - where --plugin NAME finds an installed plugin: a
 * spec whose file has no '/' and is not in the current directory is
 * looked for beside the commands, in BINDIR/../lib/strace/plugins (where
 * make install puts the example plugins; docs/plugins.md), then in
 * BINDIR/../plugins (the build tree), as NAME and as NAME.so.
 */
#ifndef CLI_PLUGINPATH_H
#define CLI_PLUGINPATH_H

#include <stddef.h>

/*
 * plugin_spec_find() - spec ("FILE[:ARGS]") with FILE found as above,
 * written into buf (len bytes): "./FILE[:ARGS]" when FILE is a regular
 * file in the current directory; spec itself when FILE has a '/' or is
 * found nowhere (loading it then says it is missing).
 */
const char *plugin_spec_find(const char *spec, char *buf, size_t len);

#endif /* CLI_PLUGINPATH_H */
