//! The closed set of failure classes (docs/protocol.md §5), defined once.

use std::fmt;
use std::str::FromStr;

/// Why a call or an execution failed. The set is closed: both sides share it,
/// and a string outside it is a decode error, never a silent [`FailureKind::Unknown`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FailureKind {
    /// May succeed later: timeout, per-call deadline, temporary outage.
    Transient,
    /// The tool asked the caller to slow down.
    RateLimited,
    /// Bad arguments, or a bad program.
    Invalid,
    /// Unknown tool or missing resource.
    NotFound,
    /// Not permitted; a person must act.
    Denied,
    /// A budget or cap was hit.
    Limit,
    /// The parent cancelled the execution.
    Cancelled,
    /// Anything not classified.
    Unknown,
}

/// One row of the failure-class table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindInfo {
    /// The class.
    pub kind: FailureKind,
    /// Its string on the wire.
    pub name: &'static str,
    /// Whether retrying the same thing may succeed.
    pub retryable: bool,
    /// What it means, in one line.
    pub description: &'static str,
}

/// The failure-class table. Docs, tests and both sides read this; nothing
/// restates it.
pub const FAILURE_KINDS: [KindInfo; 8] = [
    KindInfo {
        kind: FailureKind::Transient,
        name: "transient",
        retryable: true,
        description: "may succeed later: timeout, per-call deadline, temporary outage",
    },
    KindInfo {
        kind: FailureKind::RateLimited,
        name: "rate_limited",
        retryable: true,
        description: "the tool asked the caller to slow down; retry after backing off",
    },
    KindInfo {
        kind: FailureKind::Invalid,
        name: "invalid",
        retryable: false,
        description: "bad arguments, or a bad program (syntax error, uncaught exception, unserialisable result)",
    },
    KindInfo {
        kind: FailureKind::NotFound,
        name: "not_found",
        retryable: false,
        description: "unknown tool or missing resource",
    },
    KindInfo {
        kind: FailureKind::Denied,
        name: "denied",
        retryable: false,
        description: "not permitted; a person must act",
    },
    KindInfo {
        kind: FailureKind::Limit,
        name: "limit",
        retryable: false,
        description: "a budget or cap was hit: calls, bytes, in-flight, memory, wall clock, stack",
    },
    KindInfo {
        kind: FailureKind::Cancelled,
        name: "cancelled",
        retryable: false,
        description: "the parent cancelled the execution",
    },
    KindInfo {
        kind: FailureKind::Unknown,
        name: "unknown",
        retryable: false,
        description: "anything not classified (a handler's plain error lands here)",
    },
];

impl FailureKind {
    /// Every class, in table order.
    pub const ALL: [FailureKind; 8] = [
        FailureKind::Transient,
        FailureKind::RateLimited,
        FailureKind::Invalid,
        FailureKind::NotFound,
        FailureKind::Denied,
        FailureKind::Limit,
        FailureKind::Cancelled,
        FailureKind::Unknown,
    ];

    /// This class's row of [`FAILURE_KINDS`].
    pub fn info(self) -> &'static KindInfo {
        // The table is in declaration order; the index is the discriminant.
        &FAILURE_KINDS[self as usize]
    }

    /// The string on the wire, e.g. `"rate_limited"`.
    pub fn as_str(self) -> &'static str {
        self.info().name
    }

    /// Whether retrying may succeed.
    pub fn retryable(self) -> bool {
        self.info().retryable
    }

    /// What the class means, in one line.
    pub fn description(self) -> &'static str {
        self.info().description
    }
}

impl fmt::Display for FailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failure-class string that is not in the closed set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown failure kind {0:?}")]
pub struct UnknownKind(pub String);

impl FromStr for FailureKind {
    type Err = UnknownKind;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        FAILURE_KINDS
            .iter()
            .find(|row| row.name == s)
            .map(|row| row.kind)
            .ok_or_else(|| UnknownKind(s.to_owned()))
    }
}

impl serde::Serialize for FailureKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for FailureKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_in_declaration_order() {
        for (i, kind) in FailureKind::ALL.iter().enumerate() {
            assert_eq!(FAILURE_KINDS[i].kind, *kind);
            assert_eq!(kind.info().kind, *kind);
        }
    }

    #[test]
    fn every_kind_round_trips_through_its_string_and_json() {
        for row in FAILURE_KINDS {
            assert_eq!(row.name.parse::<FailureKind>(), Ok(row.kind));
            let json = serde_json::to_string(&row.kind).unwrap();
            assert_eq!(json, format!("\"{}\"", row.name));
            assert_eq!(
                serde_json::from_str::<FailureKind>(&json).unwrap(),
                row.kind
            );
        }
    }

    #[test]
    fn only_transient_and_rate_limited_are_retryable() {
        let retryable: Vec<_> = FailureKind::ALL.iter().filter(|k| k.retryable()).collect();
        assert_eq!(
            retryable,
            [&FailureKind::Transient, &FailureKind::RateLimited]
        );
    }

    #[test]
    fn each_kind_shows_and_describes_itself_from_its_row() {
        for row in FAILURE_KINDS {
            assert_eq!(row.kind.to_string(), row.name);
            assert_eq!(row.kind.as_str(), row.name);
            assert_eq!(row.kind.description(), row.description);
            assert!(!row.description.is_empty());
        }
        let failure = crate::ToolFailure::new(FailureKind::RateLimited, "slow down");
        assert_eq!(failure.to_string(), "rate_limited: slow down");
    }

    #[test]
    fn unknown_kind_string_is_an_error_not_unknown() {
        assert_eq!(
            "timeout".parse::<FailureKind>(),
            Err(UnknownKind("timeout".into()))
        );
        assert_eq!("".parse::<FailureKind>(), Err(UnknownKind(String::new())));
        assert_eq!(
            "Limit".parse::<FailureKind>(),
            Err(UnknownKind("Limit".into()))
        );
        assert!(serde_json::from_str::<FailureKind>("\"nope\"").is_err());
        assert!(serde_json::from_str::<FailureKind>("3").is_err());
    }
}
