/* SPDX-License-Identifier: MIT */
/*
 * pt_backend/pipeline/pipeline.h - from a recording or a live capture to
 * events in a ring, the one header other stages include:
 *
 *   offline.h       a perf.data file (ptrace-capture -i)
 *   rawpt.h         a raw PT stream and the code it ran (--pt)
 *   live_decode.h   the streams of a live capture (-p PID, -- CMD)
 *   live_run.h      the live capture's session and poll loop
 *
 * Each builds the process images from the sideband, runs the decoder's
 * walkers over the PT and writes what they emit, with the definitions
 * that name it, through sink.h (private) into the ring; ctxcut.h
 * (private) cuts per-CPU streams where a CPU changes task.
 */
#ifndef PT_BACKEND_PIPELINE_PIPELINE_H
#define PT_BACKEND_PIPELINE_PIPELINE_H

#include "live_decode.h"
#include "live_run.h"
#include "offline.h"
#include "rawpt.h"

#endif /* PT_BACKEND_PIPELINE_PIPELINE_H */
