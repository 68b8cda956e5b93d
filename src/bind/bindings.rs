//! The binder's Bindings: one placement posted as a v1 `Binding`, its reply turned into an
//! outcome (a 409 read back to tell `already_bound` from `conflict`).
//!
//! Input: a placement. Output: its [`ActionResult`]. Upstream counterpart: `DefaultBinder`
//! (`pkg/scheduler/framework/plugins/defaultbinder/default_binder.go`).

use super::*;

impl Binder<'_> {
    pub(super) async fn bind_one(
        &self,
        placement: &Placement,
        key: &PodKey,
        blocked: Option<&String>,
    ) -> ActionResult {
        let result = |outcome: Outcome, attempts: u32, message: String| ActionResult {
            action: Action::Bind,
            pod: placement.pod.clone(),
            node: placement.node.clone(),
            preemptor: None,
            outcome,
            attempts,
            message,
        };
        if let Some(reason) = blocked {
            return self.finish(result(Outcome::Skipped, 0, reason.clone()));
        }
        let binding = Binding {
            metadata: ObjectMeta {
                name: Some(key.name.clone()),
                namespace: Some(key.namespace.clone()),
                ..Default::default()
            },
            target: ObjectReference {
                api_version: Some("v1".to_string()),
                kind: Some("Node".to_string()),
                name: Some(placement.node.clone()),
                ..Default::default()
            },
        };
        let api = self.pods(&key.namespace);
        let pp = self.post_params();
        let call = self
            .call(&format!("bind {key}"), || {
                api.create_subresource::<Binding, Status>("binding", &key.name, &pp, &binding)
            })
            .await;
        let attempts = call.attempts;
        let by_us = call.ambiguous && !self.options.dry_run;
        if attempts == 0 {
            let m = call.result.err().map(|f| f.message().to_string()).unwrap_or_default();
            return self.finish(result(Outcome::Skipped, 0, format!("not sent: {m}")));
        }
        let fail = match call.result {
            Ok(_) => return self.finish(result(Outcome::Bound, attempts, String::new())),
            Err(Fail::NotFound(_)) => {
                return self.finish(result(Outcome::Gone, attempts, "no longer exists".into()));
            }
            Err(Fail::Fatal(m)) if !call.ambiguous => {
                return self.finish(result(Outcome::Failed, attempts, m));
            }
            // A 409, or an end that may hide an applied binding: read the pod back.
            Err(fail) => fail,
        };
        let m = fail.message().to_string();
        let r = match self.read_back(key).await {
            ReadBack::Pod(v) if v.node.as_deref() == Some(placement.node.as_str()) => {
                if by_us {
                    let m = "an earlier attempt went unanswered; the pod is on its node";
                    result(Outcome::Bound, attempts, m.to_string())
                } else {
                    result(Outcome::AlreadyBound, attempts, String::new())
                }
            }
            ReadBack::Pod(PodView { node: Some(other), .. }) => {
                result(Outcome::Conflict, attempts, format!("already bound to node {other:?}"))
            }
            ReadBack::Pod(PodView { deleting: true, .. }) => {
                result(Outcome::Gone, attempts, "being deleted".to_string())
            }
            ReadBack::Missing => result(Outcome::Gone, attempts, "no longer exists".to_string()),
            ReadBack::Pod(_) => {
                result(Outcome::Failed, attempts, format!("{m}; read back: not bound"))
            }
            ReadBack::Failed(f) => result(
                Outcome::Unknown,
                attempts,
                format!("{m}; reading the pod back failed too: {f}"),
            ),
        };
        self.finish(r)
    }
}
