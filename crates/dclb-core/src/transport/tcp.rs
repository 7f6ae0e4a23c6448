//! TCP NewReno (RFC 5681, 6582, 6298) with DCTCP (RFC 8257), counted in bytes.
//!
//! **Sender.** Slow start adds the bytes each ACK newly acknowledges; congestion avoidance adds one MSS per
//! window's worth of acknowledged bytes. The third duplicate ACK triggers fast retransmit and NewReno fast
//! recovery: `ssthresh = max(flight/2, 2 MSS)`, `cwnd = ssthresh + 3 MSS`, one MSS more per further dupACK,
//! a partial ACK retransmits the next hole and deflates the window, a full ACK (past `recover`) ends recovery
//! with `cwnd = ssthresh`. The RTO follows RFC 6298 with a minimum and exponential backoff; on timeout the
//! sender goes back to `snd_una` with `cwnd = 1 MSS` (go-back-N, as without SACK).
//!
//! **DCTCP.** Data is sent ECN-capable; the receiver echoes CE on every ACK. The sender counts acknowledged
//! and marked bytes over observation windows that end when the cumulative ACK passes the `snd_nxt` of the
//! window's start, then updates `alpha = (1 - g) alpha + g F`. On an ECE it cuts at most once per window:
//! `cwnd = ssthresh = max(cwnd (1 - alpha/2), 2 MSS)`, and does not grow until that window is acknowledged.
//!
//! **RTT samples** come from the timestamp each ACK echoes (the send time of the data packet that triggered
//! it, as with TCP timestamps), taken on ACKs that acknowledge new data. A handshake, if any, is the host's:
//! the sender starts with the initial window when the host first lets it send.
//!
//! **Receiver.** ACKs every packet with the cumulative ACK, keeps out-of-order data as byte intervals, and so
//! sends a duplicate ACK for each out-of-order arrival. A data packet whose bytes the receiver already holds
//! means an earlier copy arrived: its retransmission was spurious (the count dclb reports as such).

use super::TcpParams;
use crate::units::Time;

/// Why a segment is sent again.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Retx {
    /// First transmission of these bytes.
    #[default]
    No,
    /// Fast retransmit or a NewReno partial-ACK retransmission: triggered by duplicate ACKs, which reordering
    /// can cause without any loss.
    Fast,
    /// Go-back-N after a retransmission timeout.
    Timeout,
}

/// A segment the sender wants on the wire.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    pub seq: u64,
    pub len: u32,
    pub retx: Retx,
}

#[derive(Clone, Debug)]
pub struct TcpSender {
    /// Payload bytes to send; `u64::MAX / 2` for an unbounded flow.
    pub size: u64,
    pub dctcp: bool,
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// Highest byte ever sent (exclusive); segments below it are retransmissions.
    pub high_tx: u64,
    pub cwnd: u64,
    pub ssthresh: u64,
    /// Bytes acknowledged towards the next congestion-avoidance increase.
    ca_acc: u64,
    dupacks: u32,
    in_recovery: bool,
    /// NewReno `recover`: highest byte sent when recovery began.
    recover: u64,
    /// Highest byte sent when the last timeout fired (0: none yet). Duplicate ACKs at or below it come from
    /// go-back-N copies of data the receiver already holds and must not start a fast retransmit
    /// (RFC 6582 §4.1).
    rto_recover: u64,
    pub srtt: Time,
    rttvar: Time,
    pub rto: Time,
    /// When the retransmission timer fires, if armed.
    pub rto_deadline: Option<Time>,
    /// Wire bytes the host lets this flow add to its NIC queue now (TCP small queues; `u64::MAX`: no limit).
    /// The host sets it before each call that may send; [`TcpSender::fill_window`] creates no segment that
    /// does not fit and spends it. Loss recovery's own retransmissions are not held back.
    pub nic_budget: u64,
    // DCTCP
    pub alpha: f64,
    win_end: u64,
    win_acked: u64,
    win_marked: u64,
    /// No further ECE reduction (and no growth) until `snd_una` passes this.
    cwr_end: u64,
    cwr_active: bool,
    // counters
    pub timeouts: u32,
    pub fast_retransmits: u32,
}

/// What an ACK told the sender, for edge balancers and statistics.
#[derive(Copy, Clone, Debug, Default)]
pub struct AckOutcome {
    pub newly_acked: u64,
    pub rtt_sample: Option<Time>,
    pub done: bool,
}

impl TcpSender {
    pub fn new(size: u64, dctcp: bool, p: &TcpParams) -> TcpSender {
        TcpSender {
            size,
            dctcp,
            snd_una: 0,
            snd_nxt: 0,
            high_tx: 0,
            cwnd: p.init_cwnd,
            ssthresh: p.init_ssthresh,
            ca_acc: 0,
            dupacks: 0,
            in_recovery: false,
            recover: 0,
            rto_recover: 0,
            srtt: Time::ZERO,
            rttvar: Time::ZERO,
            rto: p.init_rto,
            rto_deadline: None,
            nic_budget: u64::MAX,
            alpha: p.alpha_init,
            win_end: 0,
            win_acked: 0,
            win_marked: 0,
            cwr_end: 0,
            cwr_active: false,
            timeouts: 0,
            fast_retransmits: 0,
        }
    }

    pub fn finished(&self) -> bool {
        self.snd_una >= self.size
    }

    pub fn flight(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }

    fn segment_at(&self, seq: u64, p: &TcpParams, why: Retx) -> Segment {
        let len = (self.size - seq).min(p.mss) as u32;
        Segment { seq, len, retx: if seq < self.high_tx { why } else { Retx::No } }
    }

    fn arm_rto(&mut self, now: Time) {
        self.rto_deadline = if self.snd_una < self.snd_nxt { Some(now + self.rto) } else { None };
    }

    /// Sends what the window and the NIC budget allow, appending segments to `out`.
    pub fn fill_window(&mut self, now: Time, p: &TcpParams, out: &mut Vec<Segment>) {
        while self.snd_nxt < self.size {
            // Bytes below high_tx sent from the window again are go-back-N after a timeout.
            let seg = self.segment_at(self.snd_nxt, p, Retx::Timeout);
            let flight = self.flight();
            if flight > 0 && flight + seg.len as u64 > self.cwnd {
                break;
            }
            let wire = seg.len as u64 + p.header as u64;
            if wire > self.nic_budget {
                break;
            }
            self.nic_budget -= wire;
            self.snd_nxt += seg.len as u64;
            self.high_tx = self.high_tx.max(self.snd_nxt);
            out.push(seg);
            if self.rto_deadline.is_none() {
                self.rto_deadline = Some(now + self.rto);
            }
        }
    }

    fn sample_rtt(&mut self, r: Time, p: &TcpParams) {
        if self.srtt == Time::ZERO {
            self.srtt = r;
            self.rttvar = Time(r.0 / 2);
        } else {
            let diff = self.srtt.0.abs_diff(r.0);
            self.rttvar = Time((3 * self.rttvar.0 + diff) / 4);
            self.srtt = Time((7 * self.srtt.0 + r.0) / 8);
        }
        let var = Time((4 * self.rttvar.0).max(p.granularity.0));
        self.rto = (self.srtt + var).max(p.min_rto).min(p.max_rto);
    }

    /// Processes an ACK: cumulative `ack`, ECN echo `ece`, echoed timestamp `echo_ts`.
    pub fn on_ack(&mut self, now: Time, ack: u64, ece: bool, echo_ts: Time, p: &TcpParams, out: &mut Vec<Segment>) -> AckOutcome {
        let mut outcome = AckOutcome::default();
        if self.finished() {
            outcome.done = true;
            return outcome;
        }
        let ack = ack.min(self.high_tx);
        let newly = ack.saturating_sub(self.snd_una);

        if self.dctcp {
            let counted = if newly > 0 { newly } else { p.mss };
            self.win_acked += counted;
            if ece {
                self.win_marked += counted;
            }
        }

        if newly > 0 {
            outcome.newly_acked = newly;
            let r = now.saturating_sub(echo_ts);
            self.sample_rtt(r, p);
            outcome.rtt_sample = Some(r);
            self.snd_una = ack;
            if self.snd_nxt < self.snd_una {
                self.snd_nxt = self.snd_una;
            }
            if self.in_recovery {
                if ack >= self.recover {
                    // Full ACK: leave recovery with the reduced window.
                    self.in_recovery = false;
                    self.dupacks = 0;
                    self.cwnd = self.ssthresh.max(p.mss);
                } else {
                    // Partial ACK: the next hole is lost too; retransmit it and deflate the window.
                    out.push(self.segment_at(self.snd_una, p, Retx::Fast));
                    self.cwnd = self.cwnd.saturating_sub(newly) + p.mss;
                }
            } else {
                self.dupacks = 0;
                let in_cwr = self.cwr_active && self.snd_una <= self.cwr_end;
                if !in_cwr {
                    self.cwr_active = false;
                    if self.cwnd < self.ssthresh {
                        self.cwnd += newly.min(2 * p.mss);
                    } else {
                        self.ca_acc += newly;
                        if self.ca_acc >= self.cwnd {
                            self.ca_acc -= self.cwnd;
                            self.cwnd += p.mss;
                        }
                    }
                }
            }
            self.arm_rto(now);
        } else if ack == self.snd_una && self.snd_nxt > self.snd_una {
            self.dupacks += 1;
            if self.in_recovery {
                self.cwnd += p.mss;
            } else if self.dupacks == p.dupack_threshold && ack >= self.recover && (self.rto_recover == 0 || ack > self.rto_recover) {
                self.fast_retransmits += 1;
                self.in_recovery = true;
                self.recover = self.high_tx;
                self.ssthresh = (self.flight() / 2).max(2 * p.mss);
                self.cwnd = self.ssthresh + 3 * p.mss;
                out.push(self.segment_at(self.snd_una, p, Retx::Fast));
                self.arm_rto(now);
            }
        }

        if self.dctcp {
            if ece && !(self.cwr_active && self.snd_una <= self.cwr_end) && !self.in_recovery {
                let reduced = ((self.cwnd as f64) * (1.0 - self.alpha / 2.0)) as u64;
                self.cwnd = reduced.max(2 * p.mss);
                self.ssthresh = self.cwnd;
                self.cwr_active = true;
                self.cwr_end = self.snd_nxt;
            }
            if self.snd_una >= self.win_end {
                let f = if self.win_acked > 0 { self.win_marked as f64 / self.win_acked as f64 } else { 0.0 };
                self.alpha = (1.0 - p.g) * self.alpha + p.g * f.min(1.0);
                self.win_acked = 0;
                self.win_marked = 0;
                self.win_end = self.snd_nxt.max(self.snd_una + 1);
            }
        }

        if self.finished() {
            self.rto_deadline = None;
            outcome.done = true;
            return outcome;
        }
        self.fill_window(now, p, out);
        outcome
    }

    /// The retransmission timer fired at `now` (the caller checked `rto_deadline <= now`).
    pub fn on_timeout(&mut self, now: Time, p: &TcpParams, out: &mut Vec<Segment>) {
        if self.finished() || self.snd_nxt == self.snd_una {
            self.rto_deadline = None;
            return;
        }
        self.timeouts += 1;
        self.ssthresh = (self.flight() / 2).max(2 * p.mss);
        self.cwnd = p.mss;
        self.ca_acc = 0;
        self.in_recovery = false;
        self.dupacks = 0;
        self.recover = self.high_tx;
        self.rto_recover = self.high_tx;
        self.cwr_active = false;
        self.snd_nxt = self.snd_una;
        self.rto = Time(self.rto.0.saturating_mul(2)).min(p.max_rto);
        self.rto_deadline = None;
        self.fill_window(now, p, out);
        self.rto_deadline = Some(now + self.rto);
    }
}

/// What the receiver made of a data packet.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct RxOutcome {
    /// Cumulative ACK to send.
    pub ack: u64,
    /// Reordered: an original transmission that arrived after data sent later (below the highest byte
    /// received). Arrivals above a hole left by a loss are not reordering and do not count.
    pub out_of_order: bool,
    /// All of its bytes were already held: an earlier copy had arrived.
    pub duplicate: bool,
    /// A fast retransmission turned out unnecessary: this is a fast-retransmitted copy of bytes whose original
    /// transmission had arrived, or an original arriving after its fast retransmission. Reordering (or a
    /// delay longer than the dupACK clock allows) causes these; go-back-N copies after a timeout do not count.
    pub spurious: bool,
    /// In-order bytes newly delivered to the application.
    pub delivered: u64,
}

#[derive(Clone, Debug, Default)]
pub struct TcpReceiver {
    /// Next byte expected in order.
    pub rcv_nxt: u64,
    /// Out-of-order data held, as sorted disjoint [start, end) intervals above `rcv_nxt`.
    ooo: Vec<(u64, u64)>,
    /// Highest byte received so far (exclusive).
    high: u64,
    /// Ranges first received through a retransmission, with its kind (rare: only after losses or reordering).
    via_retx: Vec<(u64, u64, Retx)>,
}

impl TcpReceiver {
    fn holds(&self, start: u64, end: u64) -> bool {
        end <= self.rcv_nxt || self.ooo.iter().any(|&(s, e)| s <= start && end <= e)
    }

    /// Accepts `len` bytes at `seq`; `retx` says why the sender sent them (as marked on the packet).
    pub fn on_data(&mut self, seq: u64, len: u32, retx: Retx) -> RxOutcome {
        let end = seq + len as u64;
        let duplicate = self.holds(seq, end);
        let earlier_copy = || self.via_retx.iter().find(|r| r.0 <= seq && end <= r.1).map(|r| r.2);
        let spurious = duplicate
            && match retx {
                Retx::Fast => earlier_copy().is_none(),
                Retx::No => earlier_copy() == Some(Retx::Fast),
                Retx::Timeout => false,
            };
        let mut out = RxOutcome { out_of_order: retx == Retx::No && seq < self.high, duplicate, spurious, ..Default::default() };
        if !duplicate && retx != Retx::No {
            self.via_retx.push((seq, end, retx));
        }
        self.high = self.high.max(end);
        if !out.duplicate {
            if seq <= self.rcv_nxt {
                let before = self.rcv_nxt;
                self.rcv_nxt = end;
                // Absorb held intervals that are now contiguous.
                while let Some(&(s, e)) = self.ooo.first() {
                    if s > self.rcv_nxt {
                        break;
                    }
                    self.rcv_nxt = self.rcv_nxt.max(e);
                    self.ooo.remove(0);
                }
                out.delivered = self.rcv_nxt - before;
            } else {
                self.insert(seq, end);
            }
        }
        out.ack = self.rcv_nxt;
        out
    }

    fn insert(&mut self, mut s: u64, mut e: u64) {
        let mut i = 0;
        while i < self.ooo.len() {
            let (a, b) = self.ooo[i];
            if b < s {
                i += 1;
            } else if a > e {
                break;
            } else {
                s = s.min(a);
                e = e.max(b);
                self.ooo.remove(i);
            }
        }
        self.ooo.insert(i, (s, e));
    }

    /// Bytes of state held for out-of-order data bookkeeping.
    pub fn held_intervals(&self) -> usize {
        self.ooo.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TransportConfig;

    fn params() -> TcpParams {
        TcpParams::from_config(&TransportConfig::default())
    }

    #[test]
    fn initial_window_is_ten_segments() {
        let p = params();
        let mut s = TcpSender::new(100 * p.mss, true, &p);
        let mut out = Vec::new();
        s.fill_window(Time::ZERO, &p, &mut out);
        assert_eq!(out.len(), 10);
        assert!(out.iter().all(|x| x.retx == Retx::No));
    }

    #[test]
    fn three_dupacks_trigger_one_fast_retransmit() {
        let p = params();
        let mut s = TcpSender::new(100 * p.mss, false, &p);
        let mut out = Vec::new();
        s.fill_window(Time::ZERO, &p, &mut out);
        out.clear();
        let t = Time::from_us(10);
        s.on_ack(t, p.mss, false, Time::ZERO, &p, &mut out); // first segment acked
        out.clear();
        for _ in 0..2 {
            s.on_ack(t, p.mss, false, Time::ZERO, &p, &mut out);
        }
        assert!(out.iter().all(|x| x.retx == Retx::No), "no retransmission before the third dupACK");
        s.on_ack(t, p.mss, false, Time::ZERO, &p, &mut out);
        let retx: Vec<_> = out.iter().filter(|x| x.retx == Retx::Fast).collect();
        assert_eq!(retx.len(), 1);
        assert_eq!(retx[0].seq, p.mss);
        assert_eq!(s.fast_retransmits, 1);
    }

    #[test]
    fn dctcp_alpha_moves_towards_marked_fraction() {
        let p = params();
        let mut s = TcpSender::new(1_000 * p.mss, true, &p);
        let mut out = Vec::new();
        s.fill_window(Time::ZERO, &p, &mut out);
        // Acknowledge everything unmarked for many windows: alpha decays from 1 by (1-g) per window.
        let mut acked = 0;
        let mut windows = 0;
        while acked < 500 * p.mss {
            acked += p.mss;
            let a0 = s.alpha;
            out.clear();
            s.on_ack(Time::from_us(1 + acked / p.mss), acked, false, Time::ZERO, &p, &mut out);
            if s.alpha < a0 {
                windows += 1;
            }
        }
        assert!(windows >= 3);
        assert!((s.alpha - (1.0 - p.g).powi(windows)).abs() < 1e-9, "alpha {} after {windows} windows", s.alpha);
    }

    #[test]
    fn ece_cuts_window_once_per_window() {
        let p = params();
        let mut s = TcpSender::new(1_000 * p.mss, true, &p);
        let mut out = Vec::new();
        s.fill_window(Time::ZERO, &p, &mut out);
        let w0 = s.cwnd;
        s.on_ack(Time::from_us(10), p.mss, true, Time::ZERO, &p, &mut out);
        let w1 = s.cwnd;
        assert!(w1 < w0, "alpha starts at 1, so the first ECE halves the window");
        s.on_ack(Time::from_us(11), 2 * p.mss, true, Time::ZERO, &p, &mut out);
        assert_eq!(s.cwnd, w1, "a second ECE in the same window neither cuts nor grows");
    }

    #[test]
    fn receiver_detects_out_of_order_and_duplicates() {
        let mut r = TcpReceiver::default();
        assert_eq!(r.on_data(0, 100, Retx::No).ack, 100);
        let o = r.on_data(200, 100, Retx::No);
        assert!(!o.out_of_order && !o.duplicate, "a gap alone is not reordering");
        assert_eq!(o.ack, 100);
        let o = r.on_data(200, 100, Retx::Fast);
        assert!(o.duplicate && o.spurious, "a fast retransmission of data already held was spurious");
        let o = r.on_data(100, 100, Retx::No);
        assert!(o.out_of_order, "an original arriving below the highest byte received was reordered");
        assert_eq!(o.ack, 300);
        assert_eq!(o.delivered, 200);
        let o = r.on_data(0, 100, Retx::Timeout);
        assert!(o.duplicate && !o.spurious, "go-back-N copies after a timeout are not counted as spurious");
        // Bytes 300..400 are lost; their timeout copy arrives, then a fast retransmission of them: the original
        // never arrived, so the fast retransmission was not caused by reordering.
        r.on_data(400, 100, Retx::No);
        r.on_data(300, 100, Retx::Timeout);
        assert!(!r.on_data(300, 100, Retx::Fast).spurious);
        // Bytes 500..600: the fast retransmission arrives first, then the delayed original: spurious.
        r.on_data(600, 100, Retx::No);
        r.on_data(500, 100, Retx::Fast);
        assert!(r.on_data(500, 100, Retx::No).spurious);
    }

    #[test]
    fn dupacks_from_go_back_n_copies_do_not_start_fast_retransmit() {
        let p = params();
        let mut s = TcpSender::new(100 * p.mss, false, &p);
        let mut out = Vec::new();
        s.fill_window(Time::ZERO, &p, &mut out); // segments 0..10 sent
        s.on_timeout(Time::from_us(5000), &p, &mut out); // resend from 0
        out.clear();
        // The receiver held everything: the ACK jumps to 10 segments, new data goes out ...
        s.on_ack(Time::from_us(5100), 10 * p.mss, false, Time::from_us(5000), &p, &mut out);
        out.clear();
        // ... and the other go-back-N copies arriving at the receiver produce duplicate ACKs at 10 segments.
        for _ in 0..5 {
            s.on_ack(Time::from_us(5101), 10 * p.mss, false, Time::from_us(5000), &p, &mut out);
        }
        assert!(out.iter().all(|x| x.retx == Retx::No), "no fast retransmit on dupACKs at the pre-timeout high-water mark");
        assert_eq!(s.fast_retransmits, 0);
    }

    #[test]
    fn timeout_goes_back_to_snd_una_with_one_segment() {
        let p = params();
        let mut s = TcpSender::new(100 * p.mss, false, &p);
        let mut out = Vec::new();
        s.fill_window(Time::ZERO, &p, &mut out);
        out.clear();
        s.on_timeout(Time::from_us(5000), &p, &mut out);
        assert_eq!(out, vec![Segment { seq: 0, len: p.mss as u32, retx: Retx::Timeout }]);
        assert_eq!(s.cwnd, p.mss);
        assert_eq!(s.rto, Time::from_us(10_000));
    }
}
