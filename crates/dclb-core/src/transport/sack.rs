//! Selective acknowledgements: the SACK option an ACK carries (RFC 2018, with RFC 2883 duplicate reports) and
//! the sender's scoreboard for RFC 6675 loss recovery.
//!
//! **The option.** The receiver reports up to [`MAX_BLOCKS`] ranges of data it holds above the cumulative ACK,
//! the block holding the segment that triggered the ACK first, then the blocks it reported most recently. When
//! the segment was a duplicate, the first block is a D-SACK naming it (below the cumulative ACK, or inside the
//! second block). Blocks are kept as offsets from the ACK number (`i32` pairs: 28 bytes per option instead of
//! 56 with absolute `u64`s, in a table beside the packet arena); a block too far from the ACK to fit is not
//! reported.
//!
//! **The scoreboard** keeps the SACKed ranges above `snd_una`. With RFC 6675's `DupThresh` (the dupACK
//! threshold) and every data segment starting at a multiple of the MSS (so blocks are unions of whole
//! segments), it answers the three questions of loss recovery. An example with `DupThresh` = 3:
//!
//! ```text
//!   segment   0    1    2    3    4    5    6    7    8    9
//!           |....|....|####|....|####|####|....|####|....|....|    #### SACKed, .... not
//!           snd_una             L                                high_data
//!            lost lost      lost            not lost   not  not
//! ```
//!
//! Walking down from the top, the SACKed data exceeds `(DupThresh - 1)` segments at the block 4-5 (three
//! segments in two blocks), so `L` is its start: holes 0, 1 and 3 are lost, holes 6, 8 and 9 are not (yet).
//!
//! * **IsLost(s)**: an un-SACKed byte is lost when more than `(DupThresh - 1) * MSS` bytes or `DupThresh`
//!   separate blocks above it are SACKed. Both only grow as `s` goes down, so the lost bytes are exactly the
//!   un-SACKed bytes below one boundary `L`, found by walking the blocks from the top.
//! * **pipe** (bytes in the network): every un-SACKed byte not lost counts once, and once more if it was
//!   retransmitted in this recovery. Retransmissions walk the holes upwards from `snd_una` (NextSeg never
//!   goes back below `HighRxt`), so the retransmitted bytes are the un-SACKed bytes below `HighRxt`:
//!   `pipe = unsacked[max(snd_una, L), high_data) + unsacked[snd_una, HighRxt)`.
//! * **NextSeg** (what to send when `cwnd - pipe >= MSS`): (1) the first hole at or above `HighRxt` if it is
//!   lost and below the highest SACKed byte; else (2) new data; else (3) that hole even if not lost yet; else
//!   (4) once per recovery, after a partial ACK, a "rescue" copy of the highest un-SACKed segment (tail loss).
//!   This lives in [`super::tcp::TcpSender`], which owns `snd_nxt` and the flow size.
//!
//! **D-SACK undo.** When a recovery starts, the scoreboard saves `cwnd` and `ssthresh` and counts the
//! retransmissions the recovery sends. Each D-SACK for data of that recovery is one retransmission the
//! receiver did not need (both copies arrived). When the recovery is over and every retransmission has been
//! reported so, the window reduction was caused by reordering, not loss, and is undone (the use RFC 2883
//! suggests, with RFC 3708's detection; restoring the saved window is the response). A DCTCP cut in the meantime is applied to the
//! saved window too, so the undo never erases congestion news.

/// SACK blocks per ACK: what fits in TCP's option space next to the timestamp option.
pub const MAX_BLOCKS: usize = 3;

/// The SACK option of an ACK: [start, end) byte ranges as offsets from the cumulative ACK, most recent first.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct SackOption {
    blocks: [(i32, i32); MAX_BLOCKS],
    len: u8,
}

impl SackOption {
    /// Appends the block `[start, end)` of an ACK for `ack`; false if the option is full or the block is too
    /// far from `ack` to encode.
    pub fn push(&mut self, ack: u64, start: u64, end: u64) -> bool {
        let off = |x: u64| i32::try_from(x as i128 - ack as i128).ok();
        match (off(start), off(end)) {
            (Some(s), Some(e)) if (self.len as usize) < MAX_BLOCKS => {
                self.blocks[self.len as usize] = (s, e);
                self.len += 1;
                true
            }
            _ => false,
        }
    }

    /// The blocks of an ACK for `ack`, as absolute byte ranges.
    pub fn blocks(&self, ack: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        let abs = move |o: i32| (ack as i64 + o as i64) as u64;
        self.blocks[..self.len as usize].iter().map(move |&(s, e)| (abs(s), abs(e)))
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// RFC 2883: the first block is a D-SACK if it lies below the cumulative ACK or inside the second block.
    pub fn first_is_dsack(&self, ack: u64) -> bool {
        let mut b = self.blocks(ack);
        match (b.next(), b.next()) {
            (Some((_, e)), _) if e <= ack => true,
            (Some((s, e)), Some((s2, e2))) => s2 <= s && e <= e2,
            _ => false,
        }
    }

    /// Bytes the option adds to the ACK on the wire: kind and length bytes, 8 per block, padded to 4 bytes.
    pub fn wire_bytes(&self) -> u32 {
        if self.len == 0 {
            0
        } else {
            (2 + 8 * self.len as u32).div_ceil(4) * 4
        }
    }
}

/// What a recovery saved to undo its window reduction.
#[derive(Clone, Debug)]
struct Undo {
    cwnd: u64,
    ssthresh: u64,
    /// The recovery's sequence range, `[snd_una, recover)` at its start: D-SACKs outside it are not its own.
    start: u64,
    end: u64,
    /// Retransmissions of this recovery not yet reported as duplicates.
    unreported: u32,
}

/// The sender's SACK state: SACKed ranges above `snd_una` and RFC 6675's recovery markers.
#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    /// SACKed ranges, sorted, disjoint and not touching, all above `snd_una`.
    sacked: Vec<(u64, u64)>,
    /// `HighRxt`: bytes of this recovery below it have been retransmitted (exclusive end).
    high_rxt: u64,
    /// `RescueRxt`: a rescue retransmission is allowed once `snd_una` passes it; `None` before any recovery.
    rescue_rxt: Option<u64>,
    undo: Option<Undo>,
}

impl Scoreboard {
    /// Records the SACK option of an ACK for `ack` while `snd_una` is `una`. Returns true if it SACKed bytes
    /// not SACKed before (what makes an ACK a duplicate ACK in RFC 6675).
    pub fn record(&mut self, una: u64, ack: u64, opt: &SackOption, mss: u64) -> bool {
        let dsack = opt.first_is_dsack(ack);
        let mut new = false;
        for (i, (s, e)) in opt.blocks(ack).enumerate() {
            if i == 0 && dsack {
                self.reported_duplicate(s, e, mss);
            } else {
                new |= self.insert(s.max(una), e);
            }
        }
        new
    }

    /// Adds `[s, e)` to the SACKed ranges; true if any byte in it was new.
    fn insert(&mut self, mut s: u64, mut e: u64) -> bool {
        if s >= e {
            return false;
        }
        let before: u64 = self.sacked.iter().map(|&(a, b)| b.min(e).saturating_sub(a.max(s))).sum();
        let new = before < e - s;
        let i = self.sacked.partition_point(|&(_, b)| b < s);
        let mut j = i;
        while j < self.sacked.len() && self.sacked[j].0 <= e {
            s = s.min(self.sacked[j].0);
            e = e.max(self.sacked[j].1);
            j += 1;
        }
        self.sacked.splice(i..j, [(s, e)]);
        new
    }

    /// The cumulative ACK moved to `una`: SACK state below it is no longer needed.
    pub fn advance(&mut self, una: u64) {
        let gone = self.sacked.partition_point(|&(_, b)| b <= una);
        self.sacked.drain(..gone);
        if let Some(first) = self.sacked.first_mut() {
            first.0 = first.0.max(una);
        }
    }

    /// The first un-SACKed byte at or above `pos`.
    pub fn first_unsacked(&self, pos: u64) -> u64 {
        let i = self.sacked.partition_point(|&(_, b)| b <= pos);
        match self.sacked.get(i) {
            Some(&(a, b)) if a <= pos => b,
            _ => pos,
        }
    }

    /// The highest SACKed byte (exclusive), if any.
    pub fn highest_sacked(&self) -> Option<u64> {
        self.sacked.last().map(|r| r.1)
    }

    /// `L`: un-SACKed bytes below it are lost (IsLost), those at or above it are not. `una` if none is lost.
    pub fn lost_boundary(&self, una: u64, dupthresh: u32, mss: u64) -> u64 {
        let mut bytes = 0;
        for (k, &(a, b)) in self.sacked.iter().rev().enumerate() {
            bytes += b - a;
            if k + 1 >= dupthresh as usize || bytes > (dupthresh as u64 - 1) * mss {
                return a;
            }
        }
        una
    }

    /// Un-SACKed bytes in `[a, b)`.
    fn unsacked(&self, a: u64, b: u64) -> u64 {
        if a >= b {
            return 0;
        }
        b - a - self.sacked.iter().map(|&(s, e)| e.min(b).saturating_sub(s.max(a))).sum::<u64>()
    }

    /// RFC 6675 `pipe`: bytes presumed in the network, with `lost` from [`Scoreboard::lost_boundary`].
    pub fn pipe(&self, una: u64, high_data: u64, lost: u64) -> u64 {
        self.unsacked(lost.max(una), high_data) + self.unsacked(una, self.high_rxt.min(high_data))
    }

    /// The end of the highest un-SACKed data below `high_data`.
    pub fn top_of_holes(&self, high_data: u64) -> u64 {
        match self.sacked.last() {
            Some(&(a, b)) if b >= high_data => a,
            _ => high_data,
        }
    }

    pub fn high_rxt(&self) -> u64 {
        self.high_rxt
    }

    /// A recovery of `[una, recover)` starts by retransmitting `[una, first_end)`; `saved` is the window
    /// (cwnd, ssthresh) before its reduction if a D-SACK undo may restore it.
    pub fn start_recovery(&mut self, saved: Option<(u64, u64)>, una: u64, recover: u64, first_end: u64) {
        self.undo = saved.map(|(cwnd, ssthresh)| Undo { cwnd, ssthresh, start: una, end: recover, unreported: 0 });
        self.high_rxt = first_end;
        self.rescue_rxt = Some(first_end);
        self.count_retransmission();
    }

    /// NextSeg rules (1) and (3) retransmitted a hole ending at `end`.
    pub fn resent_hole(&mut self, end: u64) {
        self.high_rxt = end;
        self.count_retransmission();
    }

    /// Rule (4): a rescue retransmission is allowed once the cumulative ACK has passed the first
    /// retransmission of the recovery, and only once.
    pub fn may_rescue(&self, una: u64) -> bool {
        self.rescue_rxt.is_some_and(|r| una > r)
    }

    /// A rescue retransmission left; none again in this recovery (ending at `recover`).
    pub fn resent_rescue(&mut self, recover: u64) {
        self.rescue_rxt = Some(recover);
        self.count_retransmission();
    }

    fn count_retransmission(&mut self) {
        if let Some(u) = &mut self.undo {
            u.unreported += 1;
        }
    }

    /// A D-SACK reported `[s, e)` as received twice.
    fn reported_duplicate(&mut self, s: u64, e: u64, mss: u64) {
        if let Some(u) = &mut self.undo {
            if u.start <= s && e <= u.end {
                u.unreported = u.unreported.saturating_sub((e - s).div_ceil(mss) as u32);
            }
        }
    }

    /// Outside recovery: if every retransmission of the last recovery was reported as a duplicate, returns
    /// the window (cwnd, ssthresh) to restore, once.
    pub fn take_undo(&mut self) -> Option<(u64, u64)> {
        match &self.undo {
            Some(u) if u.unreported == 0 => self.undo.take().map(|u| (u.cwnd, u.ssthresh)),
            _ => None,
        }
    }

    /// A DCTCP cut to `factor` of the window: the saved window shares it.
    pub fn scale_saved(&mut self, factor: f64, floor: u64) {
        if let Some(u) = &mut self.undo {
            u.cwnd = ((u.cwnd as f64 * factor) as u64).max(floor);
            u.ssthresh = u.cwnd;
        }
    }

    /// A retransmission timeout: the recovery, and any pending undo, are over.
    pub fn on_timeout(&mut self) {
        self.undo = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 100;

    fn option(ack: u64, blocks: &[(u64, u64)]) -> SackOption {
        let mut o = SackOption::default();
        for &(s, e) in blocks {
            assert!(o.push(ack, s, e));
        }
        o
    }

    #[test]
    fn option_round_trips_blocks_and_counts_wire_bytes() {
        let o = option(1_000, &[(1_200, 1_300), (500, 600), (3_000, 3_400)]);
        assert_eq!(o.blocks(1_000).collect::<Vec<_>>(), vec![(1_200, 1_300), (500, 600), (3_000, 3_400)]);
        assert_eq!(o.wire_bytes(), 28);
        assert_eq!(option(0, &[(100, 200)]).wire_bytes(), 12);
        assert!(!option(0, &[]).push(0, 1 << 40, (1 << 40) + 100), "too far from the ACK to encode");
        assert!(option(1_000, &[(500, 600)]).first_is_dsack(1_000), "below the cumulative ACK");
        assert!(option(1_000, &[(1_200, 1_300), (1_100, 1_400)]).first_is_dsack(1_000), "inside the second block");
        assert!(!option(1_000, &[(1_200, 1_300), (1_500, 1_600)]).first_is_dsack(1_000));
    }

    #[test]
    fn scoreboard_merges_blocks_and_reports_new_data() {
        let mut sb = Scoreboard::default();
        assert!(sb.record(0, 0, &option(0, &[(200, 300)]), MSS));
        assert!(!sb.record(0, 0, &option(0, &[(200, 300)]), MSS), "a repeated block is not news");
        assert!(sb.record(0, 0, &option(0, &[(300, 400), (600, 700)]), MSS));
        assert_eq!(sb.sacked, vec![(200, 400), (600, 700)]);
        assert!(!sb.record(0, 0, &option(0, &[(250, 350), (200, 400)]), MSS), "a D-SACK is not news");
        sb.advance(300);
        assert_eq!(sb.sacked, vec![(300, 400), (600, 700)]);
        assert_eq!(sb.first_unsacked(300), 400);
        assert_eq!(sb.first_unsacked(450), 450);
    }

    #[test]
    fn lost_boundary_and_pipe_follow_rfc_6675() {
        // Segments 0..10 sent; 2, 4, 5 and 7 SACKed.
        let mut sb = Scoreboard::default();
        sb.record(0, 0, &option(0, &[(700, 800), (400, 600), (200, 300)]), MSS);
        // Above segment 6: 100 bytes in one block, not lost. Above 3: 300 bytes (more than 2 MSS): lost, and so
        // is everything un-SACKed below the block 400..600.
        assert_eq!(sb.lost_boundary(0, 3, MSS), 400);
        // Not lost and un-SACKed: 6, 8, 9; nothing retransmitted yet.
        assert_eq!(sb.pipe(0, 1_000, 400), 300);
        // After retransmitting 0 and 1, they count again.
        sb.start_recovery(None, 0, 1_000, 100);
        sb.resent_hole(200);
        assert_eq!(sb.pipe(0, 1_000, 400), 500);
        // Three separate blocks above a hole also make it lost, whatever their size.
        let mut sb = Scoreboard::default();
        sb.record(0, 0, &option(0, &[(110, 120), (130, 140), (150, 160)]), MSS);
        assert_eq!(sb.lost_boundary(0, 3, MSS), 110);
        assert_eq!(sb.top_of_holes(160), 150);
        assert_eq!(sb.top_of_holes(200), 200);
    }
}
