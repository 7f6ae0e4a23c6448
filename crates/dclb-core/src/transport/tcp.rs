//! TCP NewReno (RFC 5681, 6582, 6298) or SACK loss recovery (RFC 6675, 2883), with DCTCP (RFC 8257), counted
//! in bytes.
//!
//! **Sender.** Slow start adds the bytes each ACK newly acknowledges; congestion avoidance adds one MSS per
//! window's worth of acknowledged bytes. The third duplicate ACK triggers fast retransmit and NewReno fast
//! recovery: `ssthresh = max(flight/2, 2 MSS)`, `cwnd = ssthresh + 3 MSS`, one MSS more per further dupACK,
//! a partial ACK retransmits the next hole and deflates the window, a full ACK (past `recover`) ends recovery
//! with `cwnd = ssthresh`. The RTO follows RFC 6298 with a minimum and exponential backoff; on timeout the
//! sender goes back to `snd_una` with `cwnd = 1 MSS` (go-back-N).
//!
//! **SACK** (`transport.sack`). The receiver reports the ranges it holds above the cumulative ACK; the sender
//! keeps them in a [`Scoreboard`] (see [`super::sack`] for IsLost, pipe and NextSeg). A duplicate ACK is one
//! that SACKs new data; recovery starts at the third one, or as soon as the scoreboard shows the first
//! unacknowledged segment lost, with `cwnd = ssthresh = max(flight/2, 2 MSS)`. During recovery every ACK
//! updates the scoreboard and the sender sends what NextSeg chooses while `cwnd - pipe >= 1 MSS`: all holes
//! deemed lost are retransmitted within one RTT, and SACKed data never is. A cumulative ACK past `recover`
//! ends recovery with `cwnd = ssthresh`. A timeout still goes back to `snd_una` (the retransmitted holes might
//! be lost again) but skips what the receiver reported holding (RFC 6675 §5.1). With `transport.dsack_undo`,
//! a recovery whose every retransmission the receiver reports as a duplicate (D-SACK) is undone: reordering,
//! not loss, triggered it.
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
//! means an earlier copy arrived: its retransmission was spurious (the count dclb reports as such). With SACK
//! its ACKs carry the SACK option: the range that holds the arriving segment first, then the ranges reported
//! most recently, and a D-SACK first when the segment was a duplicate.

use super::sack::{SackOption, Scoreboard, MAX_BLOCKS};
use super::TcpParams;
use crate::units::Time;

/// Why a segment is sent again.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Retx {
    /// First transmission of these bytes.
    #[default]
    No,
    /// Fast retransmit, a NewReno partial-ACK retransmission or a SACK recovery retransmission: triggered by
    /// duplicate ACKs or SACKs, which reordering can cause without any loss.
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
    /// RFC 6675 state when the connection uses SACK; `None`: NewReno.
    sack: Option<Box<Scoreboard>>,
    // Window validation (`transport.cwnd_validation`): over the current window of data (until `snd_una`
    // passes `usage_end`), the most bytes in flight and whether the window stopped a send.
    max_flight: u64,
    cwnd_limited: bool,
    usage_end: u64,
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
            sack: p.sack.then(Box::default),
            max_flight: 0,
            cwnd_limited: false,
            usage_end: 0,
        }
    }

    /// A connection in mid-life (a stationary start's pre-loaded flow): the first `prior` bytes were sent
    /// and acknowledged before the run, so sending resumes there, from the initial window. The markers of
    /// recovery and of DCTCP's windows are compared with `snd_una` only and stay at zero.
    pub fn resume_at(&mut self, prior: u64) {
        debug_assert!(prior < self.size);
        (self.snd_una, self.snd_nxt, self.high_tx) = (prior, prior, prior);
    }

    pub fn finished(&self) -> bool {
        self.snd_una >= self.size
    }

    pub fn flight(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }

    fn segment_at(&self, seq: u64, p: &TcpParams, why: Retx) -> Segment {
        segment(self.size, self.high_tx, seq, p.mss, why)
    }

    fn arm_rto(&mut self, now: Time) {
        self.rto_deadline = if self.snd_una < self.snd_nxt { Some(now + self.rto) } else { None };
    }

    /// Sends what the window and the NIC budget allow, appending segments to `out`.
    pub fn fill_window(&mut self, now: Time, p: &TcpParams, out: &mut Vec<Segment>) {
        loop {
            self.skip_sacked();
            if self.snd_nxt >= self.size {
                break;
            }
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
        self.note_usage(self.flight() + p.mss > self.cwnd);
    }

    /// Records how much of the window the sender uses, after each round of sending (Linux's
    /// `tcp_cwnd_validate`): a full window is remembered for the window of data in flight, otherwise the
    /// largest flight; a new measurement starts once that window of data is acknowledged.
    /// `full`: the window is used up after this round of sending.
    fn note_usage(&mut self, full: bool) {
        let flight = self.flight();
        if self.snd_una >= self.usage_end || full || (!self.cwnd_limited && flight > self.max_flight) {
            self.cwnd_limited = full;
            self.max_flight = flight;
            self.usage_end = self.snd_nxt;
        }
    }

    /// Whether an ACK may grow the window: always without window validation; with it, in slow start while
    /// the window is below twice the most recent flight, in congestion avoidance while the window limits.
    fn may_grow(&self, p: &TcpParams) -> bool {
        !p.cwnd_validation || self.cwnd_limited || (self.cwnd < self.ssthresh && self.cwnd < 2 * self.max_flight)
    }

    /// Going back after a timeout, skips what the receiver reported holding.
    fn skip_sacked(&mut self) {
        if let Some(sb) = &self.sack {
            self.snd_nxt = sb.first_unsacked(self.snd_nxt);
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

    /// Processes an ACK: cumulative `ack`, ECN echo `ece`, echoed timestamp `echo_ts`, SACK option `sack`
    /// (ignored without SACK).
    #[allow(clippy::too_many_arguments)]
    pub fn on_ack(&mut self, now: Time, ack: u64, ece: bool, echo_ts: Time, sack: &SackOption, p: &TcpParams, out: &mut Vec<Segment>) -> AckOutcome {
        let mut outcome = AckOutcome::default();
        if self.finished() {
            outcome.done = true;
            return outcome;
        }
        let sacked_new = match &mut self.sack {
            Some(sb) => sb.record(self.snd_una, ack, sack, p.mss),
            None => false,
        };
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
            if let Some(sb) = &mut self.sack {
                sb.advance(ack);
            }
            if self.in_recovery {
                if ack >= self.recover {
                    // Full ACK: leave recovery with the reduced window.
                    self.in_recovery = false;
                    self.dupacks = 0;
                    self.cwnd = self.ssthresh.max(p.mss);
                } else if self.sack.is_none() {
                    // Partial ACK: the next hole is lost too; retransmit it and deflate the window. (With SACK
                    // the scoreboard knows which holes are lost: NextSeg below decides.)
                    out.push(self.segment_at(self.snd_una, p, Retx::Fast));
                    self.cwnd = self.cwnd.saturating_sub(newly) + p.mss;
                }
            } else {
                self.dupacks = 0;
                let in_cwr = self.cwr_active && self.snd_una <= self.cwr_end;
                if !in_cwr {
                    self.cwr_active = false;
                    if !self.may_grow(p) {
                        // Application- or NIC-limited: the window was not what held the sender back.
                    } else if self.cwnd < self.ssthresh {
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
            if self.sack.is_some() {
                self.sack_dupack(now, sacked_new, p, out);
            } else {
                self.dupacks += 1;
                if self.in_recovery {
                    self.cwnd += p.mss;
                } else if self.dupacks == p.dupack_threshold && self.may_start_recovery(ack) {
                    self.fast_retransmits += 1;
                    self.in_recovery = true;
                    self.recover = self.high_tx;
                    self.ssthresh = (self.flight() / 2).max(2 * p.mss);
                    self.cwnd = self.ssthresh + 3 * p.mss;
                    out.push(self.segment_at(self.snd_una, p, Retx::Fast));
                    self.arm_rto(now);
                }
            }
        }
        let sack_recovery = self.in_recovery && self.sack.is_some();
        if sack_recovery {
            self.send_in_recovery(p, out);
        } else if let Some((cwnd, ssthresh)) = self.sack.as_mut().and_then(|sb| sb.take_undo()) {
            self.cwnd = self.cwnd.max(cwnd);
            self.ssthresh = self.ssthresh.max(ssthresh);
        }

        if self.dctcp {
            if ece && !(self.cwr_active && self.snd_una <= self.cwr_end) && !self.in_recovery {
                let factor = 1.0 - self.alpha / 2.0;
                let reduced = ((self.cwnd as f64) * factor) as u64;
                self.cwnd = reduced.max(2 * p.mss);
                self.ssthresh = self.cwnd;
                self.cwr_active = true;
                self.cwr_end = self.snd_nxt;
                if let Some(sb) = &mut self.sack {
                    sb.scale_saved(factor, 2 * p.mss);
                }
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
        if !sack_recovery {
            self.fill_window(now, p, out);
        }
        outcome
    }

    /// A new loss recovery may start once the cumulative ACK has passed the previous one's `recover` and
    /// exceeds the highest byte sent before the last timeout (RFC 6582, RFC 6675 §5 and §5.1).
    fn may_start_recovery(&self, ack: u64) -> bool {
        ack >= self.recover && (self.rto_recover == 0 || ack > self.rto_recover)
    }

    /// An ACK that did not advance `snd_una`, with SACK (RFC 6675 §5 steps 1-4; in recovery, step (C) in
    /// [`TcpSender::send_in_recovery`] does the rest).
    fn sack_dupack(&mut self, now: Time, sacked_new: bool, p: &TcpParams, out: &mut Vec<Segment>) {
        // Only an ACK that SACKs new data is a duplicate ACK; D-SACKs and repeats say nothing about loss.
        if !sacked_new || self.in_recovery {
            return;
        }
        self.dupacks += 1;
        let una = self.snd_una;
        let first_lost = self.sack.as_deref().is_some_and(|sb| sb.lost_boundary(una, p.dupack_threshold, p.mss) > una);
        if !(self.dupacks >= p.dupack_threshold || first_lost) || !self.may_start_recovery(una) {
            return;
        }
        self.fast_retransmits += 1;
        self.in_recovery = true;
        self.recover = self.high_tx;
        let saved = p.dsack_undo.then_some((self.cwnd, self.ssthresh));
        self.ssthresh = (self.flight() / 2).max(2 * p.mss);
        self.cwnd = self.ssthresh;
        let seg = self.segment_at(una, p, Retx::Fast);
        let sb = self.sack.as_deref_mut().expect("SACK connection");
        sb.start_recovery(saved, una, self.recover, una + seg.len as u64);
        out.push(seg);
        self.arm_rto(now);
    }

    /// RFC 6675 §5 step (C): sends what NextSeg picks while `cwnd - pipe >= 1 MSS`.
    fn send_in_recovery(&mut self, p: &TcpParams, out: &mut Vec<Segment>) {
        let sb = self.sack.as_deref().expect("SACK connection");
        let lost = sb.lost_boundary(self.snd_una, p.dupack_threshold, p.mss);
        let mut pipe = sb.pipe(self.snd_una, self.snd_nxt, lost);
        while pipe + p.mss <= self.cwnd {
            let Some(seg) = self.next_seg(lost, p) else { break };
            pipe += seg.len as u64;
            out.push(seg);
        }
    }

    /// RFC 6675 NextSeg, with `lost` the IsLost boundary (see [`super::sack`]); records what it picks.
    fn next_seg(&mut self, lost: u64, p: &TcpParams) -> Option<Segment> {
        let (una, size, high_tx) = (self.snd_una, self.size, self.high_tx);
        let sb = self.sack.as_deref_mut().expect("SACK connection");
        let hole = sb.first_unsacked(sb.high_rxt().max(una));
        let below_sacked = sb.highest_sacked().is_some_and(|h| hole < h);
        // (1) the first hole not yet retransmitted, if lost; (3) with no new data to send, even if not.
        if below_sacked && (hole < lost || self.snd_nxt >= size) {
            let seg = segment(size, high_tx, hole, p.mss, Retx::Fast);
            sb.resent_hole(hole + seg.len as u64);
            return Some(seg);
        }
        // (2) new data.
        if self.snd_nxt < size {
            let seg = segment(size, high_tx, self.snd_nxt, p.mss, Retx::Fast);
            self.snd_nxt += seg.len as u64;
            self.high_tx = self.high_tx.max(self.snd_nxt);
            return Some(seg);
        }
        // (4) once per recovery, after a partial ACK: the highest un-SACKed segment, so that a lost tail is
        // recovered without a timeout.
        let top = sb.top_of_holes(self.snd_nxt);
        if sb.may_rescue(una) && top > una {
            sb.resent_rescue(self.recover);
            return Some(segment(size, high_tx, ((top - 1) / p.mss * p.mss).max(una), p.mss, Retx::Fast));
        }
        None
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
        if let Some(sb) = &mut self.sack {
            sb.on_timeout();
        }
        self.snd_nxt = self.snd_una;
        self.rto = Time(self.rto.0.saturating_mul(2)).min(p.max_rto);
        self.rto_deadline = None;
        self.fill_window(now, p, out);
        self.rto_deadline = Some(now + self.rto);
    }
}

/// A segment of at most one MSS at `seq`, marked as a retransmission (`why`) if it starts below `high_tx`.
fn segment(size: u64, high_tx: u64, seq: u64, mss: u64, why: Retx) -> Segment {
    let len = (size - seq).min(mss) as u32;
    Segment { seq, len, retx: if seq < high_tx { why } else { Retx::No } }
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
    /// With SACK: one byte inside each out-of-order range reported lately, most recent first, at most
    /// [`MAX_BLOCKS`]. Ranges only grow and merge, so a byte keeps naming its range until the cumulative ACK
    /// passes it.
    recent: Vec<u64>,
}

impl TcpReceiver {
    /// The receiving end of [`TcpSender::resume_at`]: the first `prior` bytes arrived before the run.
    pub fn resume_at(&mut self, prior: u64) {
        (self.rcv_nxt, self.high) = (prior, prior);
    }

    /// The out-of-order range holding byte `x`.
    fn range_of(&self, x: u64) -> Option<(u64, u64)> {
        self.ooo.iter().copied().find(|&(s, e)| s <= x && x < e)
    }

    /// With SACK, called after every [`TcpReceiver::on_data`]: the SACK option for the ACK of the segment
    /// `[seq, end)` that just arrived, `duplicate` as on_data found it (RFC 2018 §4, RFC 2883).
    pub fn sack_option(&mut self, seq: u64, end: u64, duplicate: bool) -> SackOption {
        let mut recent = std::mem::take(&mut self.recent);
        if !duplicate && seq > self.rcv_nxt {
            let fresh = self.range_of(seq);
            recent.retain(|&x| self.range_of(x) != fresh);
            recent.insert(0, seq);
            recent.truncate(MAX_BLOCKS);
        }
        recent.retain(|&x| x > self.rcv_nxt);
        let ack = self.rcv_nxt;
        let mut opt = SackOption::default();
        if duplicate {
            opt.push(ack, seq, end);
            if let Some((s, e)) = self.range_of(seq) {
                opt.push(ack, s, e);
            }
        }
        for &x in &recent {
            let (s, e) = self.range_of(x).expect("a recent byte is held out of order");
            if !opt.blocks(ack).skip(duplicate as usize).any(|b| b == (s, e)) {
                opt.push(ack, s, e);
            }
        }
        self.recent = recent;
        opt
    }

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

    /// A sender its NIC budget holds to two segments in flight, acked one segment at a time for 200 ACKs:
    /// the window it ends with.
    fn window_after_nic_limited_acks(validation: bool) -> u64 {
        let p = TcpParams { cwnd_validation: validation, ..params() };
        let mut s = TcpSender::new(10_000 * p.mss, false, &p);
        let mut out = Vec::new();
        let seg = p.mss + p.header as u64;
        s.nic_budget = 2 * seg;
        s.fill_window(Time::ZERO, &p, &mut out);
        assert_eq!(out.len(), 2);
        for i in 1..=200u64 {
            out.clear();
            s.on_ack(Time::from_us(10 * i), i * p.mss, false, Time::ZERO, &SackOption::default(), &p, &mut out);
            s.nic_budget = seg;
            s.fill_window(Time::from_us(10 * i), &p, &mut out);
            assert!(s.flight() <= 2 * p.mss);
        }
        s.cwnd
    }

    #[test]
    fn a_window_the_sender_does_not_use_does_not_grow() {
        let p = params();
        // With validation the window stays at its initial 10 segments (twice the flight of 2 is below it);
        // without, slow start adds every acknowledged byte, 200 segments' worth.
        assert_eq!(window_after_nic_limited_acks(true), 10 * p.mss);
        assert_eq!(window_after_nic_limited_acks(false), 210 * p.mss);
        // A sender the window holds back grows it as before: ten ACKs of a full initial window add ten.
        let mut s = TcpSender::new(10_000 * p.mss, false, &p);
        let mut out = Vec::new();
        s.fill_window(Time::ZERO, &p, &mut out);
        for i in 1..=10u64 {
            s.on_ack(Time::from_us(10 * i), i * p.mss, false, Time::ZERO, &SackOption::default(), &p, &mut out);
            s.fill_window(Time::from_us(10 * i), &p, &mut out);
        }
        assert_eq!(s.cwnd, 20 * p.mss);
    }

    #[test]
    fn three_dupacks_trigger_one_fast_retransmit() {
        let p = params();
        let mut s = TcpSender::new(100 * p.mss, false, &p);
        let mut out = Vec::new();
        s.fill_window(Time::ZERO, &p, &mut out);
        out.clear();
        let t = Time::from_us(10);
        s.on_ack(t, p.mss, false, Time::ZERO, &SackOption::default(), &p, &mut out); // first segment acked
        out.clear();
        for _ in 0..2 {
            s.on_ack(t, p.mss, false, Time::ZERO, &SackOption::default(), &p, &mut out);
        }
        assert!(out.iter().all(|x| x.retx == Retx::No), "no retransmission before the third dupACK");
        s.on_ack(t, p.mss, false, Time::ZERO, &SackOption::default(), &p, &mut out);
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
            s.on_ack(Time::from_us(1 + acked / p.mss), acked, false, Time::ZERO, &SackOption::default(), &p, &mut out);
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
        s.on_ack(Time::from_us(10), p.mss, true, Time::ZERO, &SackOption::default(), &p, &mut out);
        let w1 = s.cwnd;
        assert!(w1 < w0, "alpha starts at 1, so the first ECE halves the window");
        s.on_ack(Time::from_us(11), 2 * p.mss, true, Time::ZERO, &SackOption::default(), &p, &mut out);
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
        s.on_ack(Time::from_us(5100), 10 * p.mss, false, Time::from_us(5000), &SackOption::default(), &p, &mut out);
        out.clear();
        // ... and the other go-back-N copies arriving at the receiver produce duplicate ACKs at 10 segments.
        for _ in 0..5 {
            s.on_ack(Time::from_us(5101), 10 * p.mss, false, Time::from_us(5000), &SackOption::default(), &p, &mut out);
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

/// Loss recovery on a wire: one sender, one receiver, fixed delays, chosen losses and late segments.
#[cfg(test)]
mod recovery_tests {
    use super::*;
    use crate::config::TransportConfig;

    const DELAY: Time = Time::from_us(10);
    /// Serialisation time of a data segment on the sender's link (ACKs take none).
    const GAP: Time = Time::from_us(1);
    /// Round trip of a segment sent on an idle link.
    const RTT: Time = Time::from_us(21);

    fn rtts(x: f64) -> Time {
        Time((RTT.0 as f64 * x) as u64)
    }

    #[derive(Debug)]
    struct Recovery {
        start: Time,
        first_retx: Time,
        end: Time,
    }

    enum Ev {
        Data(Segment, Time),
        Ack(u64, SackOption, Time),
    }

    /// A flow of `segments` full segments between a sender and a receiver `DELAY` apart. Segment `n` in
    /// `lose` as `(n, k)` loses its first `k` transmissions; the first transmission of one in `late` takes
    /// longer by the given time.
    struct Wire {
        p: TcpParams,
        tx: TcpSender,
        rx: TcpReceiver,
        now: Time,
        link_free: Time,
        lose: Vec<(u64, u32)>,
        late: Vec<(u64, Time)>,
        copies: Vec<u32>,
        /// Pending arrivals (time, order of sending, event).
        events: Vec<(Time, u64, Ev)>,
        /// Packets sent so far, data and ACKs: the order of events arriving at the same time.
        sent: u64,
        retransmitted: Vec<(Time, u64)>,
        /// Loss recoveries: when they started, when their first retransmission left (the sender's link may
        /// be busy), when they ended; and cwnd after each ACK.
        recoveries: Vec<Recovery>,
        cwnd: Vec<(Time, u64)>,
        spurious: u64,
    }

    impl Wire {
        fn new(segments: u64, sack: bool, dsack_undo: bool) -> Wire {
            let p = TcpParams::from_config(&TransportConfig { sack, dsack_undo, ..Default::default() });
            Wire {
                tx: TcpSender::new(segments * p.mss, false, &p),
                rx: TcpReceiver::default(),
                p,
                now: Time::ZERO,
                link_free: Time::ZERO,
                lose: vec![],
                late: vec![],
                copies: vec![0; segments as usize],
                events: vec![],
                sent: 0,
                retransmitted: vec![],
                recoveries: vec![],
                cwnd: vec![],
                spurious: 0,
            }
        }

        fn transmit(&mut self, segs: &mut Vec<Segment>) {
            for seg in segs.drain(..) {
                let n = seg.seq / self.p.mss;
                let depart = self.now.max(self.link_free);
                self.link_free = depart + GAP;
                self.sent += 1;
                self.copies[n as usize] += 1;
                if seg.retx != Retx::No {
                    self.retransmitted.push((depart, n));
                }
                if self.lose.iter().any(|&(m, k)| m == n && self.copies[n as usize] <= k) {
                    continue;
                }
                let extra = self.late.iter().find(|l| l.0 == n && seg.retx == Retx::No).map_or(Time::ZERO, |l| l.1);
                self.events.push((depart + DELAY + extra, self.sent, Ev::Data(seg, depart)));
            }
        }

        fn run(&mut self) {
            let mut segs = Vec::new();
            self.tx.fill_window(self.now, &self.p, &mut segs);
            self.transmit(&mut segs);
            while !self.tx.finished() {
                let next = self.events.iter().enumerate().min_by_key(|(_, e)| (e.0, e.1)).map(|(i, e)| (i, e.0));
                match (next, self.tx.rto_deadline) {
                    (_, Some(d)) if next.is_none_or(|(_, t)| d < t) => {
                        self.now = d;
                        self.tx.on_timeout(d, &self.p, &mut segs);
                    }
                    (Some((i, t)), _) => {
                        self.now = t;
                        match self.events.swap_remove(i).2 {
                            Ev::Data(seg, sent_at) => {
                                let o = self.rx.on_data(seg.seq, seg.len, seg.retx);
                                self.spurious += o.spurious as u64;
                                let sack = if self.p.sack { self.rx.sack_option(seg.seq, seg.seq + seg.len as u64, o.duplicate) } else { SackOption::default() };
                                self.sent += 1;
                                self.events.push((t + DELAY, self.sent, Ev::Ack(o.ack, sack, sent_at)));
                            }
                            Ev::Ack(ack, sack, echo) => {
                                let was = self.tx.in_recovery;
                                self.tx.on_ack(t, ack, false, echo, &sack, &self.p, &mut segs);
                                if !was && self.tx.in_recovery {
                                    self.recoveries.push(Recovery { start: t, first_retx: Time::MAX, end: Time::MAX });
                                } else if was && !self.tx.in_recovery {
                                    self.recoveries.last_mut().unwrap().end = t;
                                }
                                self.cwnd.push((t, self.tx.cwnd));
                            }
                        }
                    }
                    _ => panic!("nothing left to happen, flow unfinished"),
                }
                let first = self.retransmitted.len();
                self.transmit(&mut segs);
                if let Some(r) = self.recoveries.last_mut().filter(|r| r.first_retx == Time::MAX) {
                    r.first_retx = self.retransmitted[first].0;
                }
            }
        }

        fn retransmitted_segments(&self) -> Vec<u64> {
            self.retransmitted.iter().map(|r| r.1).collect()
        }
    }

    fn flow(sack: bool, lose: &[u64]) -> Wire {
        let mut w = Wire::new(300, sack, false);
        w.lose = lose.iter().map(|&n| (n, 1)).collect();
        w.run();
        w
    }

    #[test]
    fn sack_recovers_one_loss_in_one_round_trip() {
        let w = flow(true, &[60]);
        assert_eq!(w.tx.timeouts, 0);
        assert_eq!(w.retransmitted_segments(), vec![60]);
        assert_eq!(w.recoveries.len(), 1);
        let r = &w.recoveries[0];
        assert!(r.end - r.first_retx <= rtts(1.0) + GAP + GAP, "{r:?}");
    }

    /// Three segments lost in one window: SACK marks all three lost and retransmits them within one round
    /// trip; NewReno learns of each hole from the partial ACK for the previous one, one round trip apart.
    #[test]
    fn sack_recovers_three_losses_of_one_window_in_one_round_trip() {
        let sack = flow(true, &[60, 63, 66]);
        assert_eq!(sack.tx.timeouts, 0);
        assert_eq!(sack.retransmitted_segments(), vec![60, 63, 66]);
        assert_eq!(sack.recoveries.len(), 1);
        let r = &sack.recoveries[0];
        assert!(r.end - r.first_retx < rtts(1.5), "SACK: {r:?}");
        assert!(sack.retransmitted[2].0 - sack.retransmitted[0].0 < rtts(0.5), "holes resent together: {:?}", sack.retransmitted);

        let reno = flow(false, &[60, 63, 66]);
        assert_eq!(reno.tx.timeouts, 0);
        assert_eq!(reno.retransmitted_segments(), vec![60, 63, 66]);
        let r = &reno.recoveries[0];
        assert!(r.end - r.first_retx >= rtts(3.0) - GAP - GAP - GAP, "NewReno: {r:?}");
    }

    #[test]
    fn go_back_n_after_a_timeout_skips_sacked_data() {
        // The fast retransmissions of 60 and 90 are lost too: the timeout recovers them, and the go-back-N
        // that follows resends only the two holes, not the SACKed segments after 90.
        let mut w = Wire::new(300, true, false);
        w.lose = vec![(60, 2), (90, 2)];
        w.run();
        assert_eq!(w.tx.timeouts, 1);
        assert_eq!(w.retransmitted_segments(), vec![60, 90, 60, 90]);
    }

    /// Segment 60 is delayed by 1.5 round trips: three later segments are SACKed first, so the sender enters
    /// recovery, halves its window and resends 60; then both copies arrive and the receiver D-SACKs the
    /// second. With the undo, the window is back where it was before the recovery at once; without it, the
    /// sender stays in congestion avoidance from half the window.
    #[test]
    fn dsack_undoes_a_recovery_caused_by_reordering() {
        let run = |undo: bool| {
            let mut w = Wire::new(300, true, undo);
            w.late = vec![(60, rtts(1.5))];
            w.run();
            w
        };
        let (undo, keep) = (run(true), run(false));
        for w in [&undo, &keep] {
            assert_eq!(w.tx.timeouts, 0);
            assert_eq!(w.retransmitted_segments(), vec![60]);
            assert_eq!(w.spurious, 1, "the receiver saw both copies");
        }
        let before = |w: &Wire| w.cwnd.iter().rev().find(|c| c.0 < w.recoveries[0].start).unwrap().1;
        let after = |w: &Wire| w.cwnd.iter().filter(|c| c.0 > w.recoveries[0].end).map(|c| c.1).take(5).max().unwrap();
        assert!(after(&undo) >= before(&undo), "undo: cwnd {} before the recovery, {} after", before(&undo), after(&undo));
        assert!(after(&keep) <= before(&keep) / 2 + 5 * keep.p.mss, "no undo: cwnd {} before, {} after", before(&keep), after(&keep));
    }

    #[test]
    fn receiver_reports_sack_blocks_most_recent_first_and_dsacks() {
        let mut r = TcpReceiver::default();
        let mut arrive = |seq: u64, retx: Retx| {
            let o = r.on_data(seq, 10, retx);
            let opt = r.sack_option(seq, seq + 10, o.duplicate);
            (o.ack, opt.blocks(o.ack).collect::<Vec<_>>(), opt.first_is_dsack(o.ack))
        };
        assert_eq!(arrive(0, Retx::No).1, vec![], "in order: no blocks");
        assert_eq!(arrive(20, Retx::No).1, vec![(20, 30)]);
        assert_eq!(arrive(40, Retx::No).1, vec![(40, 50), (20, 30)]);
        assert_eq!(arrive(60, Retx::No).1, vec![(60, 70), (40, 50), (20, 30)]);
        assert_eq!(arrive(80, Retx::No).1, vec![(80, 90), (60, 70), (40, 50)], "three blocks at most");
        assert_eq!(arrive(30, Retx::No).1, vec![(20, 50), (80, 90), (60, 70)], "a merged range moves to the front");
        // A duplicate inside held data: D-SACK first, then the range that holds it.
        assert_eq!(arrive(60, Retx::Fast), (10, vec![(60, 70), (60, 70), (20, 50)], true));
        // The hole fills: the cumulative ACK passes 20..50, which is no longer reported.
        assert_eq!(arrive(10, Retx::No), (50, vec![(80, 90), (60, 70)], false));
        // A duplicate below the cumulative ACK: D-SACK, then the other ranges.
        assert_eq!(arrive(0, Retx::Timeout), (50, vec![(0, 10), (80, 90), (60, 70)], true));
    }
}
