//! Runs one operation many times on 2 in-process ranks, for instruction counting under
//! `valgrind --tool=callgrind` (repeatable where wall-clock times are not):
//! `cargo run --release -p runthrough --example op_cost -- validate_global 10000`.
//!
//! Operations: `validate_global`, `agree`, `all_reduce` (one u64), `all_reduce_1m` (1 MiB of
//! f64: the ring algorithm), `barrier`, their non-blocking forms started and waited at once
//! (`ibarrier`, `iall_reduce`: the engine's schedules, to compare with the blocking calls), and
//! `send_recv` (a ping-pong of one 8-byte message each
//! way between ranks 0 and 1, blocking `send` and `recv`; other ranks idle).
use runthrough::Op;

fn main() {
    let mut args = std::env::args().skip(1);
    let op = args.next().unwrap_or_else(|| "validate_global".into());
    let n: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let ranks: u32 = args.next().and_then(|s| s.parse().ok()).unwrap_or(2);
    let outcomes = runthrough::local(ranks).run(move |world| {
        for _ in 0..n {
            match op.as_str() {
                "validate_global" => {
                    world.validate_global()?;
                }
                "agree" => {
                    world.agree(1)?;
                }
                "all_reduce" => {
                    let mut out = [0u64];
                    world.all_reduce(&[1u64], &mut out, Op::Sum)?;
                }
                "all_reduce_1m" => {
                    let send = vec![1.0f64; (1 << 20) / 8];
                    let mut out = vec![0.0f64; (1 << 20) / 8];
                    world.all_reduce(&send, &mut out, Op::Sum)?;
                }
                "barrier" => world.barrier()?,
                "ibarrier" => world.ibarrier()?.wait()?,
                "iall_reduce" => {
                    let mut out = [0u64];
                    world.iall_reduce(&[1u64], &mut out, Op::Sum)?.wait()?;
                }
                "send_recv" => {
                    let mut buf = [0u64];
                    match world.rank() {
                        0 => {
                            world.send(&[1u64], 1, 0)?;
                            world.recv(&mut buf, 1u32, 0)?;
                        }
                        1 => {
                            world.recv(&mut buf, 0u32, 0)?;
                            world.send(&buf, 0, 0)?;
                        }
                        _ => {}
                    }
                }
                other => panic!("unknown operation {other}"),
            }
        }
        Ok::<_, runthrough::Error>(())
    });
    for outcome in outcomes {
        outcome
            .returned()
            .expect("rank returned")
            .expect("no error");
    }
}
