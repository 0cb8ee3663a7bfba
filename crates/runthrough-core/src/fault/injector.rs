// SPDX-License-Identifier: MIT OR Apache-2.0
//! "Does this rank die here": the one place that answers it, for one rank's point faults.

use super::plan::{Collective, InjectedBy, Trigger};

/// What a rank is about to send, as far as fault injection cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sending {
    /// A message of the agreement numbered `seq` (0 = the first) on communicator `context`;
    /// `world` is whether that is the world communicator.
    Agreement {
        /// Whether the agreement is on the world communicator.
        world: bool,
        /// The agreement's number on its communicator (0 = the first).
        seq: u64,
    },
    /// A message of collective call `call` on communicator `context`.
    Collective {
        /// The communicator's context id.
        context: u64,
        /// The call's number on it: (collective epoch, call number within the epoch), as
        /// its packets carry them.
        call: CallNumber,
    },
    /// A revocation packet.
    Revoke,
    /// Anything else (point-to-point data, credits): a fault point only for `packet:K`.
    Other,
}

/// A collective call's number on its communicator: (collective epoch, call number within the
/// epoch).
pub type CallNumber = (u32, u32);

/// One rank's faults at points of its own calls ([`InjectedBy::Runtime`]), with the counts
/// that decide when each fires. The driver asks it at every call entry
/// ([`Injector::dies_at_call`]), collective start ([`Injector::dies_at_collective_start`]) and
/// send ([`Injector::dies_before_sending`]); the rank dies at the first question answered
/// `true`. A driver with an empty plan keeps no injector and asks nothing.
///
/// Once a question was answered `true`, [`Injector::fired`] says which fault it was and in
/// which call, for the rank to tell its launcher before it dies, and every later send is
/// refused ([`Injector::dies_before_sending`] answers `true`): a rank's other threads (its
/// progress thread delivering a message that arrived meanwhile) may still be sending while the
/// one that asked dies, and nothing more may leave a dead rank (a fault "before the call's
/// first message" means that its peers get nothing of that call from it).
///
/// # Invariants
/// Counts only grow; a collective fault is armed (`armed` is `Some`) from the start of its
/// targeted call on, for that call's messages alone (its communicator and call number: other
/// collectives, non-blocking ones included, may start and send meanwhile); `fired` is set
/// once, by the first question answered `true`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Injector {
    calls: u64,
    revokes_sent: u64,
    packets_sent: u64,
    points: Vec<Point>,
    fired: Option<(Trigger, u64)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Point {
    Call(u64),
    Agreement {
        seq: u64,
        message: u64,
        sent: u64,
    },
    Collective {
        operation: Collective,
        call: u64,
        message: u64,
        calls: u64,
        armed: Option<(u64, CallNumber)>,
        sent: u64,
    },
    Revoke(u64),
    Packet(u64),
}

impl Point {
    /// The trigger this point was planned from.
    fn trigger(&self) -> Trigger {
        match *self {
            Point::Call(k) => Trigger::Call(k),
            Point::Agreement { seq, message, .. } => Trigger::Agreement {
                call: seq + 1,
                message,
            },
            Point::Collective {
                operation,
                call,
                message,
                ..
            } => Trigger::Collective {
                operation,
                call,
                message,
            },
            Point::Revoke(message) => Trigger::Revoke { message },
            Point::Packet(k) => Trigger::Packet(k),
        }
    }
}

impl Injector {
    /// The injector of `triggers`: those the runtime injects ([`InjectedBy::Runtime`]); the
    /// others (timed, the application's) are left to whoever injects them.
    pub fn new(triggers: impl IntoIterator<Item = Trigger>) -> Self {
        let points = triggers
            .into_iter()
            .filter(|t| t.injected_by() == InjectedBy::Runtime)
            .map(|trigger| match trigger {
                Trigger::Call(k) => Point::Call(k),
                Trigger::Agreement { call, message } => Point::Agreement {
                    seq: call.saturating_sub(1),
                    message,
                    sent: 0,
                },
                Trigger::Collective {
                    operation,
                    call,
                    message,
                } => Point::Collective {
                    operation,
                    call,
                    message,
                    calls: 0,
                    armed: None,
                    sent: 0,
                },
                Trigger::Revoke { message } => Point::Revoke(message),
                Trigger::Packet(k) => Point::Packet(k),
                Trigger::After(_) | Trigger::Iteration(_) | Trigger::Recovery(_) => {
                    unreachable!("filtered")
                }
            })
            .collect();
        Injector {
            points,
            ..Injector::default()
        }
    }

    /// Whether nothing is planned (a driver need not ask).
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// The fault that fired (the first question answered `true`), with the number of the
    /// rank's communication call it fired in (1 = the first: the one in progress, or the last
    /// one started when a message of a call that returned is sent later); `None` before.
    pub fn fired(&self) -> Option<(Trigger, u64)> {
        self.fired
    }

    /// Remembers that `point` fired now, unless one did before.
    fn fire(&mut self, point: usize) {
        if self.fired.is_none() {
            self.fired = Some((self.points[point].trigger(), self.calls));
        }
    }

    /// The rank starts a communication call: whether it dies now, instead of making it.
    pub fn dies_at_call(&mut self) -> bool {
        self.calls += 1;
        let calls = self.calls;
        let point = self
            .points
            .iter()
            .position(|p| matches!(p, Point::Call(k) if *k == calls));
        point.inspect(|&p| self.fire(p)).is_some()
    }

    /// The rank starts a call of `operation` on communicator `context`, which will be call
    /// `number` there: whether it dies now, at entry. Arms the faults planned in this call's
    /// messages.
    pub fn dies_at_collective_start(
        &mut self,
        operation: Collective,
        context: u64,
        number: CallNumber,
    ) -> bool {
        let mut dies = None;
        for (index, point) in self.points.iter_mut().enumerate() {
            if let Point::Collective {
                operation: planned,
                call,
                message,
                calls,
                armed,
                sent,
            } = point
            {
                if *planned == operation {
                    *calls += 1;
                    if calls == call {
                        *armed = Some((context, number));
                        *sent = 0;
                        if *message == 0 {
                            dies = dies.or(Some(index));
                        }
                    }
                }
            }
        }
        dies.inspect(|&p| self.fire(p)).is_some()
    }

    /// The rank is about to send `sending` (every packet it sends is asked about, once):
    /// whether it dies just before.
    pub fn dies_before_sending(&mut self, sending: Sending) -> bool {
        if self.fired.is_some() {
            return true;
        }
        if sending == Sending::Revoke {
            self.revokes_sent += 1;
        }
        self.packets_sent += 1;
        let (revokes_sent, packets_sent) = (self.revokes_sent, self.packets_sent);
        let mut dies = None;
        for (index, point) in self.points.iter_mut().enumerate() {
            let here = match (point, sending) {
                (
                    Point::Agreement { seq, message, sent },
                    Sending::Agreement {
                        world: true,
                        seq: now,
                    },
                ) if *seq == now => {
                    *sent += 1;
                    sent == message
                }
                (
                    Point::Collective {
                        armed: Some(armed),
                        message,
                        sent,
                        ..
                    },
                    Sending::Collective { context, call },
                ) if *armed == (context, call) => {
                    *sent += 1;
                    sent == message
                }
                (Point::Revoke(message), Sending::Revoke) => *message == revokes_sent,
                (Point::Packet(k), _) => *k == packets_sent,
                _ => false,
            };
            if here {
                dies = dies.or(Some(index));
            }
        }
        dies.inspect(|&p| self.fire(p)).is_some()
    }
}
