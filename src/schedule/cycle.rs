//! One batch of the live scheduler: decide (plan the batch against the cluster built from the
//! caches), bind (evictions, then Bindings) and report (events and pod status), and the
//! bookkeeping of each binding's outcome.
//!
//! Input: the batch's pod keys and the loop's caches. Output: the cluster's writes and the
//! loop's queue, assumed pods and summary updated. Upstream counterpart: `schedule_one.go`
//! (`scheduleOne`, `bindingCycle`, `handleSchedulingFailure`), for a batch at a time.

use super::*;

impl Loop {
    /// Decides, binds and reports one batch.
    pub(super) async fn cycle(
        &mut self,
        keys: Vec<String>,
        leading: &mut watch::Receiver<bool>,
    ) -> Result<(), ScheduleError> {
        let started = Instant::now();
        self.batch_started = started;
        let objects = self.stores.objects();
        let built =
            match cache::build_cluster(&objects, &self.assumed, &self.options.scheduler_names) {
                Ok(b) => b,
                Err(e) => {
                    tracing::error!("building the cluster state: {e}");
                    self.fail_all(&keys, &e.to_string());
                    self.metrics.batch_result(true);
                    return Ok(());
                }
            };
        let mut excluded_pods: BTreeMap<String, String> = BTreeMap::new();
        for (object, reason) in &built.excluded {
            if object.kind == "Pod" {
                let key =
                    format!("{}/{}", object.namespace.as_deref().unwrap_or("default"), object.name);
                excluded_pods.insert(key, reason.clone());
            }
            if self.warned.insert(object.to_string()) {
                tracing::warn!("{object}: {reason}; left out of the cluster state");
            }
        }
        let in_batch: BTreeSet<&str> = keys.iter().map(String::as_str).collect();
        let pending: Vec<crate::model::Pod> = built
            .cluster
            .pending
            .into_iter()
            .filter(|p| in_batch.contains(p.key().as_str()))
            .collect();
        let found: BTreeSet<String> = pending.iter().map(|p| p.key()).collect();
        for k in keys.iter().filter(|k| !found.contains(*k)) {
            match excluded_pods.get(k) {
                Some(reason) => {
                    self.queue.unschedulable(k, Instant::now());
                    self.report_failure(k, REASON_SCHEDULER_ERROR, &format!("pod {k}: {reason}"));
                }
                // Bound meanwhile, gone, or no longer served.
                None => self.queue.done(k),
            }
        }
        if pending.is_empty() {
            return Ok(());
        }
        let batch_keys: Vec<String> = pending.iter().map(|p| p.key()).collect();
        let config = if self.forbidden.contains(OPTIONAL_FOR_PREEMPTION) {
            // Evicting without knowing the budgets could break them: no preemption.
            let mut config = (*self.config).clone();
            for profile in &mut config.profiles {
                profile
                    .plugins
                    .post_filter
                    .retain(|p| *p != crate::framework::profile::PluginName::DefaultPreemption);
            }
            Arc::new(config)
        } else {
            Arc::clone(&self.config)
        };
        let state = built.cluster.state;
        let now_unix = Timestamp::now().as_second();
        // Replacements of moved pods go to their planned node when it can take them.
        for s in &mut self.steering {
            s.observe(self.stores.pod(&s.pod).as_deref());
        }
        let mut steering = std::mem::take(&mut self.steering);
        let mut evaluator = self.evaluator.take().unwrap_or(Evaluator::Cpu);
        let backend = self.options.backend;
        let fault = self.options.plan_fault.clone();
        let objective = self.options.objective;
        let planned = tokio::task::spawn_blocking(move || {
            let mut attempt = |state,
                               pods: &[crate::model::Pod],
                               steering: &mut Vec<planner::Steer>,
                               evaluator: &mut Evaluator|
             -> Result<Plan, String> {
                if let Some(f) = &fault {
                    f.check(pods)?;
                }
                planner::plan_batch_steered(
                    state, pods, &config, now_unix, objective, steering, evaluator,
                )
                .map_err(|e| match e {
                    crate::batch::BatchError::Eval(crate::eval::EvalError::Gpu(g)) => {
                        format!("{GPU_FAILED}{g}")
                    }
                    e => e.to_string(),
                })
            };
            // Under `auto`, a GPU failure is retried on the CPU: keep copies to retry from.
            let retry = (backend == crate::eval::Backend::Auto
                && matches!(evaluator, Evaluator::Gpu(_)))
            .then(|| (state.clone(), steering.clone()));
            let (mut plan, mut aside) =
                planner::isolate(state, &pending, &mut steering, &mut evaluator, &mut attempt);
            let gpu_failed = matches!(&plan, Err(e) if e.starts_with(GPU_FAILED))
                || aside.iter().any(|(_, e)| e.starts_with(GPU_FAILED));
            if let Some((state, before)) = retry.filter(|_| gpu_failed) {
                tracing::warn!("the GPU failed; planning on the CPU from now on");
                evaluator = Evaluator::Cpu;
                steering = before;
                (plan, aside) =
                    planner::isolate(state, &pending, &mut steering, &mut evaluator, &mut attempt);
            }
            (plan, aside, steering, evaluator)
        })
        .await
        .map(|(plan, aside, steering, evaluator)| {
            self.steering = steering;
            self.evaluator = Some(evaluator);
            (plan, aside)
        });
        let mut plan = match planned {
            Ok((plan, aside)) => {
                for (key, message) in &aside {
                    tracing::error!("pod {key} cannot be planned: {message}");
                    self.fail_all(std::slice::from_ref(key), message);
                }
                self.metrics.planning_errors(aside.len());
                match plan {
                    Ok(plan) => plan,
                    Err(e) => {
                        tracing::error!("planning a batch of {} pods: {e}", batch_keys.len());
                        let rest: Vec<String> = batch_keys
                            .iter()
                            .filter(|k| !aside.iter().any(|(a, _)| a == *k))
                            .cloned()
                            .collect();
                        self.metrics.planning_errors(rest.len());
                        self.fail_all(&rest, &e);
                        self.metrics.batch_result(true);
                        return Ok(());
                    }
                }
            }
            Err(e) => {
                tracing::error!("the planner stopped: {e}");
                self.metrics.planning_errors(batch_keys.len());
                self.fail_all(&batch_keys, "internal error: the planner stopped");
                self.metrics.batch_result(true);
                return Ok(());
            }
        };
        if let Some(hook) = &self.options.before_bind {
            (hook.0)().await;
        }
        // Leadership lost while planning: nothing of this batch is written.
        if !*leading.borrow() {
            return Err(ScheduleError::LeadershipLost);
        }
        self.metrics.batch(batch_keys.len(), started.elapsed());
        self.summary.batches += 1;
        tracing::info!(
            pods = batch_keys.len(),
            placed = plan.placements.len(),
            evictions = plan.evictions.len(),
            unschedulable = plan.unschedulable.len(),
            "decided a batch in {} ms",
            started.elapsed().as_millis()
        );

        // Preemptors are nominated to their node before their victims are evicted (sent here,
        // not through the writer, so the nomination is in place first).
        let node_of_placement: BTreeMap<&str, &str> =
            plan.placements.iter().map(|p| (p.pod.as_str(), p.node.as_str())).collect();
        let mut victims: BTreeMap<&str, usize> = BTreeMap::new();
        for e in &plan.evictions {
            *victims.entry(e.preemptor.as_str()).or_insert(0) += 1;
        }
        for n in victims.values() {
            self.metrics.preemption(*n);
        }
        let preemptors: BTreeSet<&str> =
            plan.evictions.iter().map(|e| e.preemptor.as_str()).collect();
        for pre in preemptors {
            if let (Some(node), Some(pod)) = (node_of_placement.get(pre), self.stores.pod(pre))
                && let Some(patch) = events::nomination_patch(&pod, node)
            {
                let ns = pod.metadata.namespace.clone().unwrap_or_default();
                let name = pod.metadata.name.clone().unwrap_or_default();
                let api: Api<Pod> = Api::namespaced(self.client.clone(), &ns);
                let params = kube::api::PatchParams::default();
                let patch = kube::api::Patch::Strategic(&patch);
                let what = format!("nominate {pre} to {node}");
                let mut send = || api.patch_status(&name, &params, &patch);
                let sent = tokio::select! {
                    r = events::send_with_retry(self.options.write_retry, self.options.write_timeout, &what, &mut send) => r,
                    _ = lost(leading) => return Err(ScheduleError::LeadershipLost),
                };
                self.metrics.written("pod_status", sent.is_ok());
                if let Err(f) = sent {
                    tracing::warn!("{what}: {}", f.message());
                }
            }
        }
        for s in self.steering.iter().filter(|s| s.taken_by.is_some() && !s.counted) {
            if plan.placements.iter().any(|p| Some(&p.pod) == s.taken_by.as_ref()) {
                tracing::info!("steered {:?} (replacing {}) to {}", s.taken_by, s.pod, s.node);
                self.summary.steered += 1;
            }
        }
        for s in &mut self.steering {
            s.counted |= s.taken_by.is_some();
        }
        // A node deleted since the batch was planned takes no pod: its pods go back to the
        // queue (no attempt counted) with their victims spared.
        let deleted: BTreeSet<String> = plan
            .placements
            .iter()
            .map(|p| p.node.clone())
            .filter(|n| self.stores.nodes.get(&reflector::ObjectRef::new(n)).is_none())
            .collect();
        if !deleted.is_empty() {
            let (gone, kept): (Vec<_>, Vec<_>) =
                plan.placements.drain(..).partition(|p| deleted.contains(&p.node));
            plan.placements = kept;
            for p in &gone {
                tracing::info!("{} was planned on {}, which is gone: retrying it", p.pod, p.node);
                self.queue.requeue(&p.pod, Instant::now());
            }
            let requeued: BTreeSet<&str> = gone.iter().map(|p| p.pod.as_str()).collect();
            plan.evictions.retain(|e| !requeued.contains(e.preemptor.as_str()));
        }
        for p in &plan.placements {
            if let Some(pod) = self.stores.pod(&p.pod) {
                let uid = pod.metadata.uid.clone().unwrap_or_default();
                self.assumed.insert(p.pod.clone(), Assumed { uid, node: p.node.clone() });
            }
        }

        if !plan.placements.is_empty() {
            let to_bind = Plan {
                placements: plan.placements.clone(),
                evictions: plan.evictions.clone(),
                ..Plan::default()
            };
            if !*leading.borrow() {
                return Err(ScheduleError::LeadershipLost);
            }
            let report = tokio::select! {
                biased;
                _ = lost(leading) => return Err(ScheduleError::LeadershipLost),
                r = crate::bind::bind(&self.client, &to_bind, &self.options.bind, &|_: &ActionResult| {}) => r,
            };
            match report {
                Ok(report) => {
                    for r in &report.evictions {
                        self.metrics.eviction(outcome_name(r.outcome));
                    }
                    for r in &report.bindings {
                        self.binding_done(r);
                    }
                    let failed = !report.bindings.is_empty()
                        && report.bindings.iter().all(|r| r.outcome == Outcome::Failed);
                    self.metrics.batch_result(failed);
                }
                Err(e) => {
                    tracing::error!("binding the batch: {e}");
                    let placed: Vec<String> =
                        plan.placements.iter().map(|p| p.pod.clone()).collect();
                    self.fail_all(&placed, &e.to_string());
                    self.metrics.batch_result(true);
                }
            }
        } else {
            self.metrics.batch_result(false);
        }
        for u in &plan.unschedulable {
            self.summary.unschedulable += 1;
            self.metrics.unschedulable();
            self.attempt(&u.pod, metrics::UNSCHEDULABLE);
            self.queue.unschedulable(&u.pod, Instant::now());
            self.report_failure(&u.pod, REASON_UNSCHEDULABLE, &u.message);
        }
        Ok(())
    }

    pub(super) fn binding_done(&mut self, r: &ActionResult) {
        self.metrics.binding(outcome_name(r.outcome));
        match r.outcome {
            Outcome::Bound => {
                self.summary.bound += 1;
                self.attempt(&r.pod, metrics::SCHEDULED);
                let attempts = self.queue.attempts(&r.pod).unwrap_or(0).saturating_add(1);
                self.metrics.scheduled_after(attempts);
                self.queue.done(&r.pod);
                if let Some(pod) = self.stores.pod(&r.pod) {
                    let event = events::scheduled_event(
                        &pod,
                        &r.node,
                        &self.reporter(&pod),
                        Timestamp::now(),
                    );
                    self.write(Write::Event(Box::new(event)));
                }
            }
            // Moves belong to rebalancing plans, which `schedule` never makes.
            Outcome::AlreadyBound | Outcome::Moved | Outcome::Elsewhere => self.queue.done(&r.pod),
            Outcome::Conflict | Outcome::Gone => {
                self.assumed.remove(&r.pod);
                self.queue.done(&r.pod);
            }
            Outcome::Failed
            | Outcome::Unknown
            | Outcome::Skipped
            | Outcome::Refused
            | Outcome::Evicted
            | Outcome::NotNeeded => {
                self.attempt(&r.pod, metrics::ERROR);
                self.assumed.remove(&r.pod);
                self.queue.failed(&r.pod, Instant::now());
                let message = if r.outcome == Outcome::Failed {
                    format!("running Bind plugin \"DefaultBinder\": {}", r.message)
                } else {
                    format!("binding to {} was {}: {}", r.node, r.outcome, r.message)
                };
                self.report_failure(&r.pod, REASON_SCHEDULER_ERROR, &message);
            }
        }
    }
}
