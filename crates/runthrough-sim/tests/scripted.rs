// SPDX-License-Identifier: MIT OR Apache-2.0
//! The scripted scenarios (root dies mid-broadcast, parent dies with children waiting,
//! cascade of coordinators, several at once, all but one): SPEC §2.1 safety and termination,
//! and the G each must end with.

use runthrough_sim::{run, scripted};

#[test]
fn scripted_scenarios_hold_for_many_delay_seeds() {
    for seed in 0..200 {
        for scenario in scripted::scenarios(seed) {
            let outcome = match run(scenario.schedule.clone(), false) {
                Ok(outcome) => outcome,
                Err((violation, _)) => panic!("{} (seed {seed}): {violation}", scenario.name),
            };
            if let Some(g) = &scenario.final_g {
                assert_eq!(
                    outcome.final_g.as_slice(),
                    g.as_slice(),
                    "{} (seed {seed}): {}",
                    scenario.name,
                    scenario.about
                );
            }
        }
    }
}
