/* SPDX-License-Identifier: MIT */
/*
 * cli/view/format.h - the formatter's own (format.c, fmt_names.c): the
 * display forms of names and the number formatting that the views and
 * the viewer formats share. Private to cli/view/ (and its tests); the
 * formatter's API is in view.h.
 */
#ifndef CLI_VIEW_FORMAT_H
#define CLI_VIEW_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "view.h"

/*
 * fmt_name_make() - display forms of s[0..len): stores into *out, in
 * storage owned by dn. Returns 0 or -ENOMEM. Exposed for the tests.
 */
int fmt_name_make(struct fmt_names *dn, const char *s, size_t len,
		  struct fmt_name *out);
void fmt_names_fini(struct fmt_names *dn);

/*
 * fmt_display_make() - the display forms of entry e, made and kept in dn
 * when first asked (base: a DSO's file name, without the directories).
 * Returns them, or NULL when out of memory. The views keep their labels'
 * text forms so (views_label.c).
 */
const struct fmt_name *fmt_display_make(struct fmt_names *dn,
					const struct strace_name *e, int base);

/* Number formatting, exposed for the tests: append, return the new end. */
char *fmt_put_u64(char *p, uint64_t v);
char *fmt_put_hex(char *p, uint64_t v); /* "0x..." lower case */
char *fmt_put_time(char *p, uint64_t ns); /* seconds "S.NNNNNNNNN" */
/* the body of a JSON string (no quotes): at most 6 * len bytes */
char *fmt_put_json_str(char *p, const char *s, size_t len);

#endif /* CLI_VIEW_FORMAT_H */
