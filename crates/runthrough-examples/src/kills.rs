// SPDX-License-Identifier: MIT OR Apache-2.0
//! Kill plans from the command line: `RANK@WHEN,RANK@WHEN,...`, where each application says
//! what `WHEN` means (an iteration, a number of tasks, a protocol point).

use std::str::FromStr;

use runthrough::Rank;

/// Parses `3@20,5@40` into `[(3, 20), (5, 40)]`, with `WHEN` parsed by `T::from_str`. An empty
/// string is an empty plan.
///
/// # Errors
/// A message naming the entry that does not parse.
pub fn parse_kills<T: FromStr>(text: &str) -> Result<Vec<(Rank, T)>, String>
where
    T::Err: std::fmt::Display,
{
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|entry| {
            let (rank, when) = entry
                .split_once('@')
                .ok_or_else(|| format!("kill `{entry}`: expected RANK@WHEN"))?;
            let rank = rank
                .trim()
                .parse()
                .map_err(|e| format!("kill `{entry}`: bad rank: {e}"))?;
            let when = when
                .trim()
                .parse()
                .map_err(|e| format!("kill `{entry}`: {e}"))?;
            Ok((rank, when))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_list() {
        assert_eq!(
            parse_kills::<u64>("3@20, 5@40").unwrap(),
            vec![(3, 20), (5, 40)]
        );
        assert_eq!(parse_kills::<u64>("").unwrap(), vec![]);
        assert!(parse_kills::<u64>("3").is_err());
        assert!(parse_kills::<u64>("x@3").is_err());
    }
}
