#pragma once
// How many times this thread entered the engine (a trace, a decoding, a model run, a forward or backward pass of
// training), counted in debug builds only: what lets the window's layout sweep show that drawing a frame computes
// nothing, since views read what the workers made. Per thread, so the workers' entries are not the window's.
namespace attn {

#ifndef NDEBUG
inline thread_local long engine_entries = 0;
inline void note_engine_entry() { ++engine_entries; }
inline long engine_entry_count() { return engine_entries; }
#else
inline void note_engine_entry() {}
inline long engine_entry_count() { return -1; }  // not counted in this build
#endif

}  // namespace attn
