// SPDX-License-Identifier: MIT OR Apache-2.0
//! The fault grammar: every spelling documented before it became one, its round trip, its
//! errors; and the injector's answers.

use std::time::Duration;

use proptest::prelude::*;

use super::*;

fn fault(text: &str) -> Fault {
    text.parse()
        .unwrap_or_else(|e| panic!("{text:?} should parse: {e}"))
}

/// Every spelling the README (now the guide), `rtrun --help`, the examples' `--help`, `RT_FAULT`'s docs and
/// the builder's docs used before the grammar was one: each means what it meant.
#[test]
fn every_spelling_documented_before_means_what_it_meant() {
    let secs = |s: f64| Trigger::After(Duration::from_secs_f64(s));
    let agreement = |call, message| Trigger::Agreement { call, message };
    let collective = |operation, call, message| Trigger::Collective {
        operation,
        call,
        message,
    };
    let cases = [
        // rtrun --kill RANK@SECS, --stop RANK@SECS
        ("2@0.5", 2, secs(0.5)),
        ("1@0", 1, secs(0.0)),
        ("5@0.01", 5, secs(0.01)),
        ("6@0.3", 6, secs(0.3)),
        ("1@0.25", 1, secs(0.25)),
        ("3@2", 3, secs(2.0)),
        // RANK@call:K
        ("1@call:8", 1, Trigger::Call(8)),
        ("2@call:1", 2, Trigger::Call(1)),
        // RANK@validate_global:K[:M], and init's `agreement` alias
        ("2@validate_global:30", 2, agreement(30, 1)),
        ("3@validate_global:2:1", 3, agreement(2, 1)),
        ("0@agreement:4:2", 0, agreement(4, 2)),
        // RANK@COLLECTIVE:K[:M], with the MPI spellings
        ("1@all_reduce:3", 1, collective(Collective::AllReduce, 3, 0)),
        (
            "1@allreduce:3:2",
            1,
            collective(Collective::AllReduce, 3, 2),
        ),
        ("1@barrier:1", 1, collective(Collective::Barrier, 1, 0)),
        ("1@bcast:2:1", 1, collective(Collective::Broadcast, 2, 1)),
        ("1@broadcast:2", 1, collective(Collective::Broadcast, 2, 0)),
        ("1@reduce:1:1", 1, collective(Collective::Reduce, 1, 1)),
        ("1@gather:1", 1, collective(Collective::Gather, 1, 0)),
        ("1@all_gather:1", 1, collective(Collective::AllGather, 1, 0)),
        ("1@allgather:1", 1, collective(Collective::AllGather, 1, 0)),
        ("1@scatter:4:3", 1, collective(Collective::Scatter, 4, 3)),
        ("1@all_to_all:1", 1, collective(Collective::AllToAll, 1, 0)),
        ("1@alltoall:1", 1, collective(Collective::AllToAll, 1, 0)),
        ("1@scan:1", 1, collective(Collective::Scan, 1, 0)),
        ("1@exscan:2:1", 1, collective(Collective::Exscan, 2, 1)),
        (
            "1@all_reduce:2:0",
            1,
            collective(Collective::AllReduce, 2, 0),
        ),
        // heat's RANK@rN and RANK@vCALL.MESSAGE
        ("5@r1", 5, Trigger::Recovery(1)),
        ("2@v7.1", 2, agreement(7, 1)),
        // the explicit forms
        ("2@0.5s", 2, secs(0.5)),
        ("2@300ms", 2, secs(0.3)),
        ("0@revoke:2", 0, Trigger::Revoke { message: 2 }),
        ("3@iteration:25", 3, Trigger::Iteration(25)),
        ("3@step:25", 3, Trigger::Iteration(25)),
        ("5@recovery:1", 5, Trigger::Recovery(1)),
        (" 4 @ call:2 ", 4, Trigger::Call(2)),
    ];
    for (text, rank, want) in cases {
        assert_eq!(
            fault(text),
            Fault {
                rank,
                trigger: want
            },
            "{text}"
        );
    }
}

/// The examples' `--kill 3@25,5@47` (heat: iterations; bag_of_tasks: results): a bare number
/// is a step there, and everything else means what it means everywhere.
#[test]
fn the_examples_read_a_bare_number_as_a_step() {
    let plan = FaultPlan::parse_with("3@25, 5@47,2@v7.1,5@r1", BareNumber::Iteration).unwrap();
    assert_eq!(
        plan.faults(),
        [
            Fault {
                rank: 3,
                trigger: Trigger::Iteration(25)
            },
            Fault {
                rank: 5,
                trigger: Trigger::Iteration(47)
            },
            Fault {
                rank: 2,
                trigger: Trigger::Agreement {
                    call: 7,
                    message: 1
                }
            },
            Fault {
                rank: 5,
                trigger: Trigger::Recovery(1)
            },
        ]
    );
    assert_eq!(
        FaultPlan::parse_with("3@0", BareNumber::Iteration)
            .unwrap()
            .faults()[0]
            .trigger,
        Trigger::Iteration(0),
        "bag_of_tasks' 0: once the first tasks are out"
    );
    assert!(FaultPlan::parse_with("3@0.5", BareNumber::Iteration).is_err());
    // The explicit time still is a time there.
    assert_eq!(
        FaultPlan::parse_with("3@0.5s", BareNumber::Iteration)
            .unwrap()
            .faults()[0]
            .trigger,
        Trigger::After(Duration::from_millis(500))
    );
    assert_eq!(
        FaultPlan::parse_with("", BareNumber::Iteration).unwrap(),
        FaultPlan::new()
    );
}

/// Malformed faults are refused, and the error names the offending text.
#[test]
fn malformed_faults_are_refused_naming_the_text() {
    for (text, why) in [
        ("1@frobnicate:3", "unknown fault point `frobnicate`"),
        ("1@call:0", "count from 1"),
        ("1@validate_global:x:y", "`x` is not a whole number"),
        ("1@validate_global:0", "count from 1"),
        ("1@validate_global:1:0", "count from 1"),
        ("1@validate_global:1:2:3", "expected validate_global:K[:M]"),
        ("1@call", "expected call:K"),
        ("1@call:-1", "not a whole number"),
        ("1@call:2:3", "expected call:K"),
        ("1@revoke:0", "count from 1"),
        ("1@recovery:0", "count from 1"),
        ("5@r0", "count from 1"),
        ("2@v7", "expected vCALL.MESSAGE"),
        ("2@v7.x", "not a whole number"),
        ("1@all_reduce", "expected all_reduce:K[:M]"),
        ("1@all_reduce:0", "count from 1"),
        ("1@-1", "unknown fault point"),
        ("1@1.2.3", "not a time"),
        ("1@0.0000000001", "finer than a nanosecond"),
        ("1@", "unknown fault point"),
        ("x@1", "`x` is not a rank"),
        ("-1@1", "`-1` is not a rank"),
        ("4294967296@1", "is not a rank"),
        ("1", "expected RANK@WHEN"),
        ("1@2xs", "not a time"),
    ] {
        let error = text.parse::<Fault>().unwrap_err();
        assert_eq!(error.text(), text.trim(), "{text}");
        let message = error.to_string();
        assert!(
            message.contains(text) && message.contains(why),
            "{text}: {message}"
        );
    }
    // In a list, the error names the entry, not the list.
    let error = "2@0.5,1@call:0,3@1".parse::<FaultPlan>().unwrap_err();
    assert_eq!(error.text(), "1@call:0");
    let error = Trigger::parse_list("call:2,frobnicate:3").unwrap_err();
    assert_eq!(error.text(), "frobnicate:3");
}

/// A rank outside the job is refused, naming the fault (`--kill 7@0.1 -n 4`).
#[test]
fn a_rank_outside_the_job_is_refused() {
    let plan: FaultPlan = "1@call:2,7@0.1".parse().unwrap();
    assert!(plan.check_ranks(8).is_ok());
    let error = plan.check_ranks(4).unwrap_err();
    assert_eq!(error.text(), "7@0.1s");
    assert!(
        error.to_string().contains("not in a job of 4 ranks"),
        "{error}"
    );
}

/// `RT_FAULT`: one rank's triggers, comma-separated, as rtrun writes them.
#[test]
fn a_ranks_triggers_round_trip_as_rt_fault() {
    let plan: FaultPlan = "1@call:9,2@0.5,1@validate_global:2,1@bcast:1:2"
        .parse()
        .unwrap();
    let mine: Vec<Trigger> = plan.triggers_of(1).collect();
    let value = Trigger::format_list(&mine);
    assert_eq!(value, "call:9,validate_global:2:1,broadcast:1:2");
    assert_eq!(Trigger::parse_list(&value).unwrap(), mine);
    assert_eq!(Trigger::parse_list("call:2").unwrap(), [Trigger::Call(2)]);
}

fn any_trigger() -> impl Strategy<Value = Trigger> {
    let count = 1..u64::MAX;
    let operation = proptest::sample::select(Collective::ALL.to_vec());
    prop_oneof![
        (0..u64::MAX / 2, 0..1_000_000_000u32)
            .prop_map(|(s, n)| Trigger::After(Duration::new(s, n))),
        count.clone().prop_map(Trigger::Call),
        (count.clone(), count.clone())
            .prop_map(|(call, message)| Trigger::Agreement { call, message }),
        (operation, count.clone(), 0..u64::MAX).prop_map(|(operation, call, message)| {
            Trigger::Collective {
                operation,
                call,
                message,
            }
        }),
        count
            .clone()
            .prop_map(|message| Trigger::Revoke { message }),
        (0..u64::MAX).prop_map(Trigger::Iteration),
        count.prop_map(Trigger::Recovery),
    ]
}

proptest! {
    /// Display writes what FromStr reads back, in every context (explicit forms only).
    #[test]
    fn display_round_trips(
        faults in proptest::collection::vec((0..u32::MAX, any_trigger()), 0..6),
    ) {
        let plan: FaultPlan = faults
            .into_iter()
            .map(|(rank, trigger)| Fault { rank, trigger })
            .collect();
        let text = plan.to_string();
        prop_assert_eq!(&text.parse::<FaultPlan>().unwrap(), &plan);
        prop_assert_eq!(&FaultPlan::parse_with(&text, BareNumber::Iteration).unwrap(), &plan);
    }
}

fn injector(text: &str) -> Injector {
    Injector::new(Trigger::parse_list(text).unwrap())
}

/// `call:K`: the K-th call entry, and only it.
#[test]
fn a_call_fault_fires_at_its_call() {
    let mut i = injector("call:3");
    assert_eq!(
        [i.dies_at_call(), i.dies_at_call(), i.dies_at_call()],
        [false, false, true]
    );
    assert!(!i.dies_at_call());
    assert!(Injector::new([Trigger::After(Duration::ZERO), Trigger::Iteration(3)]).is_empty());
}

/// `validate_global:K:M`: the M-th message of agreement K-1 (0-based) on the world only.
#[test]
fn an_agreement_fault_fires_at_its_message_on_the_world() {
    let mut i = injector("validate_global:2:2");
    let world = |seq| Sending::Agreement { world: true, seq };
    assert!(!i.dies_before_sending(world(0)));
    assert!(!i.dies_before_sending(world(0)));
    assert!(!i.dies_before_sending(Sending::Agreement {
        world: false,
        seq: 1
    }));
    assert!(!i.dies_before_sending(world(1)));
    assert!(i.dies_before_sending(world(1)));
}

/// `OP:K[:M]`: counted per operation, armed for its call alone (its communicator and call
/// number), whatever other collectives start and send meanwhile (non-blocking ones
/// outstanding together); M = 0 at entry.
#[test]
fn a_collective_fault_is_armed_for_its_call_only() {
    let mut i = injector("all_reduce:2:2");
    let on = |context, call| Sending::Collective { context, call };
    assert!(!i.dies_at_collective_start(Collective::AllReduce, 7, (0, 0)));
    assert!(
        !i.dies_before_sending(on(7, (0, 0))) && !i.dies_before_sending(on(7, (0, 0))),
        "call 1"
    );
    assert!(!i.dies_at_collective_start(Collective::Barrier, 7, (0, 1)));
    assert!(!i.dies_at_collective_start(Collective::AllReduce, 9, (0, 0)));
    assert!(
        !i.dies_before_sending(on(7, (0, 1))),
        "another communicator's call"
    );
    assert!(!i.dies_before_sending(on(9, (0, 0))));
    // Another call starts and sends on the same communicator before the targeted one's
    // second message (a non-blocking call started after it): not counted.
    assert!(!i.dies_at_collective_start(Collective::Barrier, 9, (0, 1)));
    assert!(!i.dies_before_sending(on(9, (0, 1))));
    assert!(
        !i.dies_before_sending(on(9, (1, 0))),
        "another epoch's call 0"
    );
    assert!(i.dies_before_sending(on(9, (0, 0))));

    let mut survived = injector("bcast:1:3");
    assert!(!survived.dies_at_collective_start(Collective::Broadcast, 1, (0, 0)));
    assert!(!survived.dies_before_sending(on(1, (0, 0))));
    assert!(!survived.dies_at_collective_start(Collective::Barrier, 1, (0, 1)));
    assert!(
        !survived.dies_before_sending(on(1, (0, 1)))
            && !survived.dies_before_sending(on(1, (0, 1))),
        "the barrier's messages are not the broadcast's"
    );

    let mut entry = injector("scan:2");
    assert!(!entry.dies_at_collective_start(Collective::Scan, 0, (0, 0)));
    assert!(entry.dies_at_collective_start(Collective::Scan, 0, (0, 1)));
}

/// `revoke:M`: the M-th revocation packet, whatever else is sent between.
#[test]
fn a_revoke_fault_fires_at_its_packet() {
    let mut i = injector("revoke:2");
    assert!(!i.dies_before_sending(Sending::Revoke));
    assert!(!i.dies_before_sending(Sending::Other));
    assert!(i.dies_before_sending(Sending::Revoke));
}

/// `packet:K`: the K-th packet of any kind.
#[test]
fn a_packet_fault_fires_at_its_packet_whatever_its_kind() {
    let mut i = injector("packet:3");
    assert!(!i.dies_before_sending(Sending::Other));
    assert!(!i.dies_before_sending(Sending::Revoke));
    assert!(i.dies_before_sending(Sending::Collective {
        context: 0,
        call: (0, 0)
    }));
    assert_eq!(i.fired().map(|(t, _)| t), Some(Trigger::Packet(3)));
    assert_eq!(fault("2@packet:3").to_string(), "2@packet:3");
    assert!("2@packet:0".parse::<Fault>().is_err());
    assert!("2@packet".parse::<Fault>().is_err());
}

/// Nothing leaves a rank once a fault fired, whichever thread sends next (its progress thread
/// may answer a message that arrived while the caller died): every later send is refused.
/// Found when an agreement's first round let a rank killed "before its first message" send its
/// second one from the progress thread, so that its peers decided with its contribution.
#[test]
fn nothing_is_sent_after_a_fault_fired() {
    let mut i = injector("validate_global:1:1");
    let world = |seq| Sending::Agreement { world: true, seq };
    assert!(!i.dies_before_sending(Sending::Other));
    assert!(i.dies_before_sending(world(0)));
    assert!(i.dies_before_sending(world(0)), "the call's second message");
    assert!(i.dies_before_sending(Sending::Other));
    assert!(i.dies_before_sending(Sending::Revoke));
}

/// Several faults on one rank: it dies at the first that fires.
#[test]
fn several_faults_on_one_rank_each_fire() {
    let mut i = injector("call:5,validate_global:1");
    assert!(!i.dies_at_call());
    assert!(i.dies_before_sending(Sending::Agreement {
        world: true,
        seq: 0
    }));
}

/// The injector says which fault fired and in which of the rank's calls (what a rank tells
/// its launcher for the end-of-job report), once: the first to fire.
#[test]
fn the_injector_names_the_fault_that_fired_and_its_call() {
    let mut i = injector("call:5,validate_global:1:2");
    assert_eq!(i.fired(), None);
    assert!(!i.dies_at_call() && !i.dies_at_call());
    let world = Sending::Agreement {
        world: true,
        seq: 0,
    };
    assert!(!i.dies_before_sending(world));
    assert_eq!(i.fired(), None, "not yet");
    assert!(i.dies_before_sending(world));
    let agreement = Trigger::Agreement {
        call: 1,
        message: 2,
    };
    assert_eq!(i.fired(), Some((agreement, 2)));
    assert!(!i.dies_at_call() && !i.dies_at_call());
    assert!(i.dies_at_call(), "call 5 would fire too");
    assert_eq!(i.fired(), Some((agreement, 2)), "the first stays");

    let mut call = injector("call:3");
    assert!(!call.dies_at_call() && !call.dies_at_call() && call.dies_at_call());
    assert_eq!(call.fired(), Some((Trigger::Call(3), 3)));

    let mut collective = injector("all_reduce:2");
    assert!(!collective.dies_at_call());
    assert!(!collective.dies_at_collective_start(Collective::AllReduce, 0, (0, 0)));
    assert!(!collective.dies_at_call());
    assert!(collective.dies_at_collective_start(Collective::AllReduce, 0, (0, 1)));
    let want = Trigger::Collective {
        operation: Collective::AllReduce,
        call: 2,
        message: 0,
    };
    assert_eq!(collective.fired(), Some((want, 2)));

    let mut revoke = injector("revoke:1");
    assert!(revoke.dies_before_sending(Sending::Revoke));
    assert_eq!(revoke.fired(), Some((Trigger::Revoke { message: 1 }, 0)));
}
