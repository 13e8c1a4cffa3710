/* SPDX-License-Identifier: MIT */
/* decoder/internal.h - shared between the decoder's files; not installed. */
#ifndef DECODER_INTERNAL_H
#define DECODER_INTERNAL_H

#include <stdint.h>

#include "strace/decoder.h"

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#endif
