//! Cache prefetch hints. The engine's time on a hop goes largely to first touches of lines it has not
//! used for a while (a packet, a scheduler chunk); where the next use is known one event ahead, asking
//! for the line early lets the load overlap the current event's work. A hint changes nothing but timing.

/// Asks the CPU to bring the cache line holding `*r` into the nearest cache (a no-op off x86_64).
#[inline(always)]
pub(crate) fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of every x86_64 target, and a prefetch is a hint that neither faults nor reads
    // anything into the program; the address is a live reference's.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>((r as *const T).cast())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}
