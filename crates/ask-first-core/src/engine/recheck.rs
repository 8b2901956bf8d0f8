//! A yes holds only for what the person was shown. After a yes in a pushed (2025-11-25)
//! dialog, the target is read again right before the operation and compared with the one the
//! person answered for: the same, it runs; changed, the person is asked again with the new
//! facts, a bounded number of times. (A 2026-07-28 retry and a token's second call resolve
//! the target in the call that runs, and their seals carry what was shown: see
//! `input_required` and `token`.)

use super::{Guard, InputError, Interruption, InterruptionKind};
use crate::approval::ApprovedBy;
use crate::audit::Route;
use crate::call::GuardCall;
use crate::target::{Approval, Fingerprint, Target};

/// How many questions one call may put about a target that keeps changing while the person is
/// asked; after the last, the call is refused saying so.
pub const MAX_ASK_ROUNDS: u8 = 3;

/// The first line of a question asked again because the target changed under the dialog.
pub(super) const CHANGED_LINE: &str = "The target changed since it was last shown to you, so you are asked again. Nothing was changed yet. It is now:";

impl Guard {
    /// Asks about `target` until a yes holds for the target as it reads right before the
    /// operation, the person says no, or [`MAX_ASK_ROUNDS`] questions were put. `audited` ends
    /// as the binding fingerprint of the last target read, for the audit log.
    pub(super) async fn ask_current<T, F, Fut>(
        &self,
        call: &GuardCall,
        mut target: T,
        mut recheck: F,
        audited: &mut Fingerprint,
    ) -> (Route, Result<(T, ApprovedBy), Interruption>)
    where
        T: Target,
        F: FnMut(T) -> Fut,
        Fut: Future<Output = Result<T, InputError>>,
    {
        let mut changed = false;
        let mut round: u8 = 1;
        loop {
            let (route, decided) = self.ask(call, &target, changed).await;
            let by = match decided {
                Ok(by) => by,
                Err(interruption) => return (route, Err(interruption)),
            };
            // Only a pushed dialog is answered while the call waits; every other yes came with
            // a target resolved in this very call and a seal that carried what was shown.
            // The page's yes came while the call waited (2025-11-25) or on a retry: read
            // again, as after a dialog, so the operation runs on the target as it reads now.
            let waited = matches!(
                (route, by),
                (Route::Dialog, ApprovedBy::Dialog) | (Route::Page, ApprovedBy::Page)
            );
            if !waited {
                return (route, Ok((target, by)));
            }
            let shown = Approval::of(&target);
            let current = match recheck(target).await {
                Ok(current) => current,
                Err(rejection) => return (route, Err(Interruption::recheck_failed(rejection))),
            };
            let now = Approval::of(&current);
            *audited = now.binding;
            if now == shown {
                return (route, Ok((current, by)));
            }
            if round >= MAX_ASK_ROUNDS {
                tracing::info!(tool = %call.tool, rounds = round, "the target kept changing while the person was asked: refusing");
                return (
                    route,
                    Err(Interruption::text(
                        InterruptionKind::TargetChanged,
                        format!(
                            "Nothing was changed: the target changed while the person at the client was being asked, {round} times in a row, so no answer held for what it is now. Call the tool again once it has stopped changing.\nIt is now:\n{}",
                            Self::message(&current)
                        ),
                    )),
                );
            }
            tracing::info!(tool = %call.tool, round, "the target changed while the person was asked: asking again");
            round += 1;
            changed = true;
            target = current;
        }
    }
}
