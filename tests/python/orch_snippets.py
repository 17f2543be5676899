"""tests/python/orch_snippets.py — C++ shared by the tests' orchestration sources.

``SET_BLOCKS`` is the reference's portable way to set a task's block count: its launch spec has
``set_core_num`` in a5's tensormap_and_ringbuffer and ``set_block_num`` everywhere else, and an
orchestration picks whichever exists by SFINAE. Used here, it also checks that each platform
shows exactly one of the two (both would make the call ambiguous)."""

SET_BLOCKS = r"""
template <class S>
static auto set_blocks(S &s, int16_t n) -> decltype(s.set_block_num(n), void()) {
  s.set_block_num(n);
}
template <class S>
static auto set_blocks(S &s, int16_t n) -> decltype(s.set_core_num(n), void()) {
  s.set_core_num(n);
}
"""
