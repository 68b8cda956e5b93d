//! The binder's evictions: one preemptor's victims, one after another (the preemptor read
//! first; each victim read, then evicted with its UID as a precondition; a budget's refusal
//! stops the group), and the wait until they are gone.
//!
//! Input: a group of the plan's evictions. Output: their [`ActionResult`]s and whether the room
//! was freed. Upstream counterpart: the Eviction API (`EvictionREST`,
//! `pkg/registry/core/pod/storage/eviction.go`) as kube-scheduler's preemption calls it.

use super::*;

impl Binder<'_> {
    /// Evicts one preemptor's victims (or one victim without a named preemptor); returns the
    /// preemptor, the results by plan index, and why the room was not freed (if so).
    pub(super) async fn evict_group(
        &self,
        group: &Group<'_>,
    ) -> (Option<PodKey>, Vec<(usize, ActionResult)>, Option<String>) {
        let preemptor = group.preemptor.as_ref().map(PodKey::to_string);
        let result =
            |e: &Eviction, node: &str, outcome: Outcome, attempts: u32, message: String| {
                ActionResult {
                    action: Action::Evict,
                    pod: e.pod.clone(),
                    node: node.to_string(),
                    preemptor: preemptor.clone(),
                    outcome,
                    attempts,
                    message,
                }
            };
        let all = |outcome: Outcome, message: &str| -> Vec<(usize, ActionResult)> {
            group
                .victims
                .iter()
                .map(|(i, e, _)| {
                    (*i, self.finish(result(e, &e.node, outcome, 0, message.to_string())))
                })
                .collect()
        };

        // Is the room still needed?
        if let Some(key) = &group.preemptor {
            match self.get_pod(key).await {
                Ok(Some(p)) if p.node.as_deref() == Some(group.node) => {
                    let msg = format!("{key} is already on {}", group.node);
                    return (group.preemptor.clone(), all(Outcome::NotNeeded, &msg), None);
                }
                Ok(Some(PodView { node: Some(other), .. })) => {
                    let msg = format!("{key} is already bound to node {other:?}");
                    return (group.preemptor.clone(), all(Outcome::Skipped, &msg), None);
                }
                Ok(Some(PodView { deleting: true, .. })) => {
                    let msg = format!("{key} is being deleted");
                    return (group.preemptor.clone(), all(Outcome::Skipped, &msg), None);
                }
                Ok(None) => {
                    let msg = format!("{key} no longer exists");
                    return (group.preemptor.clone(), all(Outcome::Skipped, &msg), None);
                }
                Err(fail) => {
                    // Nothing was sent: the victims are untouched and the preemptor waits.
                    let msg = format!("reading the preemptor {key} failed: {}", fail.message());
                    return (
                        group.preemptor.clone(),
                        all(Outcome::Skipped, &msg),
                        Some(msg.clone()),
                    );
                }
                Ok(Some(_)) => {}
            }
        }

        let mut results = Vec::with_capacity(group.victims.len());
        let mut stop: Option<String> = None;
        let mut to_wait: Vec<(&PodKey, Option<String>, String)> = Vec::new();
        for (i, e, key) in &group.victims {
            if let Some(reason) = &stop {
                let r = result(e, &e.node, Outcome::Skipped, 0, reason.clone());
                results.push((*i, self.finish(r)));
                continue;
            }
            let mut node = e.node.clone();
            let (outcome, attempts, message) = match self.get_pod(key).await {
                Ok(None) => (Outcome::Gone, 0, "no longer exists".to_string()),
                Ok(Some(PodView { node: None, .. })) => {
                    (Outcome::Gone, 0, "no longer runs on a node".to_string())
                }
                Ok(Some(v)) if !e.node.is_empty() && v.node.as_deref() != Some(e.node.as_str()) => {
                    (Outcome::Gone, 0, format!("no longer runs on {}", e.node))
                }
                Ok(Some(v)) => {
                    node = v.node.clone().unwrap_or_default();
                    let (outcome, attempts, message) = self.evict_one(key, &v).await;
                    if matches!(outcome, Outcome::Evicted | Outcome::Gone) {
                        to_wait.push((key, v.uid.clone(), node.clone()));
                    }
                    (outcome, attempts, message)
                }
                Err(fail) => (Outcome::Failed, 0, format!("reading the pod: {}", fail.message())),
            };
            if matches!(
                outcome,
                Outcome::Refused | Outcome::Failed | Outcome::Unknown | Outcome::Skipped
            ) {
                stop = Some(format!("the eviction of {} was {outcome}", e.pod));
            }
            results.push((*i, self.finish(result(e, &node, outcome, attempts, message))));
        }
        if stop.is_some() || self.options.dry_run {
            return (group.preemptor.clone(), results, stop);
        }

        // Wait for the victims to be gone, so the preemptor does not land beside them.
        let deadline = Instant::now() + self.options.eviction_timeout;
        for (key, uid, node) in to_wait {
            loop {
                match self.get_pod(key).await {
                    Ok(None) => break,
                    Ok(Some(v)) if v.uid != uid || v.node.as_deref() != Some(node.as_str()) => {
                        break;
                    }
                    Ok(Some(_)) => {}
                    Err(fail) => {
                        tracing::debug!("waiting for {key} to be gone: {}", fail.message())
                    }
                }
                if Instant::now() + self.options.eviction_poll > deadline {
                    let reason = format!(
                        "{key} was still terminating after {} s",
                        self.options.eviction_timeout.as_secs()
                    );
                    return (group.preemptor.clone(), results, Some(reason));
                }
                tokio::time::sleep(self.options.eviction_poll).await;
            }
        }
        (group.preemptor.clone(), results, None)
    }

    /// Evicts a victim read as `seen`; an uncertain end is settled by reading it back.
    pub(super) async fn evict_one(&self, key: &PodKey, seen: &PodView) -> (Outcome, u32, String) {
        const UNANSWERED: &str = "an earlier attempt went unanswered";
        let call = self.post_eviction(key, seen.uid.clone()).await;
        let attempts = call.attempts;
        if attempts == 0 {
            let m = call.result.err().map(|f| f.message().to_string()).unwrap_or_default();
            return (Outcome::Skipped, 0, format!("not sent: {m}"));
        }
        // Whether our request may have removed it, when it is found gone.
        let by_us = call.ambiguous && !self.options.dry_run;
        let gone = |what: &str| {
            if by_us {
                (Outcome::Evicted, attempts, format!("{UNANSWERED}; the pod is {what}"))
            } else {
                (Outcome::Gone, attempts, format!("the pod is {what}"))
            }
        };
        match call.result {
            Ok(_) => (Outcome::Evicted, attempts, String::new()),
            Err(Fail::NotFound(_)) => gone("gone"),
            Err(Fail::Refused(m)) => (Outcome::Refused, attempts, m),
            Err(fail) => {
                if matches!(fail, Fail::Fatal(_)) && !call.ambiguous {
                    return (Outcome::Failed, attempts, fail.message().to_string());
                }
                // A UID conflict, or an end that may hide an applied eviction: look.
                match self.read_back(key).await {
                    ReadBack::Missing => gone("gone"),
                    ReadBack::Pod(now) if now.uid != seen.uid => gone("replaced by a new pod"),
                    ReadBack::Pod(now) if now.deleting => gone("being deleted"),
                    ReadBack::Pod(now) if now.node != seen.node => gone("no longer on its node"),
                    ReadBack::Pod(_) => (
                        Outcome::Failed,
                        attempts,
                        format!("{}; read back: still running", fail.message()),
                    ),
                    ReadBack::Failed(m) => (
                        Outcome::Unknown,
                        attempts,
                        format!("{}; reading the pod back failed too: {m}", fail.message()),
                    ),
                }
            }
        }
    }

    pub(super) async fn post_eviction(&self, key: &PodKey, uid: Option<String>) -> Call<Status> {
        let eviction = EvictionRequest {
            metadata: ObjectMeta {
                name: Some(key.name.clone()),
                namespace: Some(key.namespace.clone()),
                ..Default::default()
            },
            delete_options: Some(DeleteOptions {
                dry_run: self.options.dry_run.then(|| vec!["All".to_string()]),
                preconditions: uid
                    .map(|uid| Preconditions { uid: Some(uid), resource_version: None }),
                ..Default::default()
            }),
        };
        let api = self.pods(&key.namespace);
        let pp = self.post_params();
        self.call(&format!("evict {key}"), || {
            api.create_subresource::<EvictionRequest, Status>("eviction", &key.name, &pp, &eviction)
        })
        .await
    }
}
