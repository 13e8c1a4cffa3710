/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/perf/perf.h - the perf.data codec, the one header other
 * stages include: perf.data's records (perf_format.h), the reader that
 * maps a file and checks every offset (perf_read.h), the writer of
 * ptrace-capture -w and ptsynth (perf_write.h), build-ids and perf's
 * build-id cache (buildid.h), and the bundles of a recording with its
 * code (archive.h; tar files: tar.h).
 *
 * The codec knows perf.data, not Intel PT: it hands out records and AUX
 * data; the pipeline (pt_backend/pipeline/) decodes them.
 */
#ifndef PT_BACKEND_PERF_PERF_H
#define PT_BACKEND_PERF_PERF_H

#include "archive.h"
#include "buildid.h"
#include "perf_format.h"
#include "perf_pipe.h"
#include "perf_read.h"
#include "perf_write.h"
#include "tar.h"

#endif /* PT_BACKEND_PERF_PERF_H */
