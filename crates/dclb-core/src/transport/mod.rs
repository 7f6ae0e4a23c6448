//! Host transports: TCP NewReno or SACK with optional DCTCP, a TCP receiver, a resequencing buffer, and UDP CBR.
//!
//! The transport code is pure state machines: it never touches the scheduler or the fabric. The sender
//! answers each event (ACK, timeout, start) by pushing [`tcp::Segment`]s to send into a buffer and exposing
//! the time its retransmission timer should fire; the simulation turns segments into packets and keeps one
//! lazy timer event per flow.

pub mod alone;
pub mod reseq;
pub mod sack;
pub mod tcp;

use crate::config::TransportConfig;
use crate::units::Time;

/// Transport constants in engine units, derived once from [`TransportConfig`].
#[derive(Clone, Debug)]
pub struct TcpParams {
    pub mss: u64,
    pub header: u32,
    pub ack_bytes: u32,
    pub init_cwnd: u64,
    pub init_ssthresh: u64,
    pub dupack_threshold: u32,
    pub min_rto: Time,
    pub init_rto: Time,
    pub max_rto: Time,
    pub granularity: Time,
    pub g: f64,
    pub alpha_init: f64,
    pub reseq_timeout: Time,
    pub sack: bool,
    pub dsack_undo: bool,
    pub cwnd_validation: bool,
}

impl TcpParams {
    pub fn from_config(c: &TransportConfig) -> TcpParams {
        let mss = c.mss_bytes as u64;
        TcpParams {
            mss,
            header: c.header_bytes,
            ack_bytes: c.ack_bytes,
            init_cwnd: c.init_cwnd_packets as u64 * mss,
            init_ssthresh: c.init_ssthresh_bytes.unwrap_or(u64::MAX / 4),
            dupack_threshold: c.dupack_threshold,
            min_rto: Time::from_us_f64(c.min_rto_us),
            init_rto: Time::from_us_f64(c.init_rto_us),
            max_rto: Time::from_us_f64(c.max_rto_us),
            granularity: Time::from_us_f64(c.rto_granularity_us),
            g: c.dctcp_g,
            alpha_init: c.dctcp_alpha_init,
            reseq_timeout: Time::from_us_f64(c.reseq_timeout_us),
            sack: c.sack,
            dsack_undo: c.dsack_undo,
            cwnd_validation: c.cwnd_validation,
        }
    }
}
