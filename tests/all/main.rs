//! End-to-end suites through the library, in one binary so the guest
//! component is compiled once: real JS programs in the real guest, every
//! budget at its boundary, isolation, and hostile process children.

mod budgets;
mod children;
mod hostile;
mod isolation;
mod programs;
