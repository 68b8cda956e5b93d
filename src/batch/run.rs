//! One batch run's mutable state and its stages per priority tier: the sequential pods, the
//! greedy strategies over the tier's matrices (each from a copy of the state, the best kept by
//! the objective), the out-of-range classes, batch preemption and the sequential repair.
//!
//! Input: the classes, pending pods, frameworks and options of [`super::plan_once`]. Output:
//! the plan, the working cluster after it and the figures of its summary. Upstream
//! counterpart: none as a whole (see the module doc of [`super`] for each stage's).

use super::*;

/// A pod placed by the greedy.
#[derive(Debug, Clone, Copy)]
pub(super) struct GreedyPod {
    /// Index in the pending list.
    pub(super) member: usize,
    /// The node it is on now.
    pub(super) node: usize,
    /// Index of its entry in `plan.placements`.
    pub(super) plan_index: usize,
}

/// The best strategy's result so far.
struct Candidate {
    /// Whether it covers the queue order's result (the floor; true while there is none) and
    /// its rank by the objective: the greater pair wins.
    key: (bool, Rank),
    /// Pods placed per solver class, as the solver counts them.
    placed: Vec<u32>,
    /// Pods placed per solver class, as the applier counts them (members taken in order).
    next: Vec<usize>,
    /// Whether anything changed.
    changed: bool,
    /// `(solver class, pending index)` of the pods its trades and substitutions took out of
    /// the plan again.
    dropped: Vec<(usize, usize)>,
    /// Its state, when it is not the live one.
    saved: Option<Saved>,
}

/// A copy of the parts of a [`Run`] a greedy solve changes, to try another class order.
#[derive(Clone)]
struct Saved {
    cluster: ClusterState,
    plan: Plan,
    greedy_pods: Vec<GreedyPod>,
    by_class: BTreeMap<usize, Vec<usize>>,
}

/// The mutable state of a batch run.
pub(super) struct Run {
    /// The sequential scheduler, whose cluster is the working cluster.
    pub(super) sched: Baseline,
    pub(super) plan: Plan,
    /// Every pod placed by the greedy so far.
    pub(super) greedy_pods: Vec<GreedyPod>,
    /// Class → indices in `greedy_pods` of its pods.
    pub(super) by_class: BTreeMap<usize, Vec<usize>>,
    /// Per pending pod, once the greedy first placed it: the copy the working cluster holds,
    /// shared by every strategy and move ([`super::applier::Applier`]).
    pub(super) shared: Vec<Option<Arc<Pod>>>,
    /// Bumped on every change to the cluster.
    pub(super) version: u64,
    /// Class → (cluster version, outcome) of the last pod of the class that fit nowhere.
    pub(super) failures: BTreeMap<usize, (u64, Unschedulable)>,
    /// Class → cluster version when a pod of the class last failed the first pass.
    pub(super) first_pass_failures: BTreeMap<usize, u64>,
    pub(super) evaluate_ms: f64,
    /// The simulation clock (start time of pods that have none).
    pub(super) now: i64,
    /// Resource → (shift, unit name, objects outside the base unit) of the widened units.
    pub(super) widened: BTreeMap<String, (u32, String, BTreeSet<String>)>,
    /// Classes moved to the exact path, with why.
    pub(super) exact_path: Vec<ExactPath>,
    /// The strategy each tier that ran the greedy kept ([`Strategy::name`]), tier by tier.
    pub(super) strategies: Vec<&'static str>,
    /// Pods the repair step (the sequential path with preemption) placed.
    pub(super) repaired: usize,
}

impl Run {
    fn save(&self) -> Saved {
        // The nodes (each with its labels and pods) are most of the copy: cloned on all cores.
        let c = &self.sched.cluster;
        let cluster = {
            use rayon::prelude::*;
            ClusterState {
                nodes: c.nodes.par_iter().with_min_len(256).cloned().collect(),
                namespace_labels: c.namespace_labels.clone(),
                pdbs: c.pdbs.clone(),
                claims: c.claims.clone(),
            }
        };
        Saved {
            cluster,
            plan: self.plan.clone(),
            greedy_pods: self.greedy_pods.clone(),
            by_class: self.by_class.clone(),
        }
    }

    fn restore(&mut self, saved: Saved) {
        self.sched.cluster = saved.cluster;
        self.plan = saved.plan;
        self.greedy_pods = saved.greedy_pods;
        self.by_class = saved.by_class;
    }

    /// Evaluates and solves the greedy classes of one tier (with the movable pods earlier
    /// tiers placed, which relocation may move), adds the placements to the plan and the
    /// cluster, and returns the pods left unplaced as `(class, pending index)`. The inner error
    /// is a class × node matrix limit ([`matrix_limit`]) met before anything changed.
    pub(super) fn greedy_tier(
        &mut self,
        tier: &[usize],
        classes: &[Class],
        pending: &[Pod],
        frameworks: &BTreeMap<String, Frameworks>,
        options: &BatchOptions,
        evaluator: &mut Evaluator,
    ) -> Result<Result<Vec<(usize, usize)>, BatchError>, BatchError> {
        let eval_start = Instant::now();
        let to_place: Vec<usize> =
            tier.iter().copied().filter(|&c| classes[c].route == Route::Greedy).collect();
        if to_place.is_empty() {
            return Ok(Ok(Vec::new()));
        }
        // Solver classes: this tier's, then earlier tiers' movable classes with placed pods.
        let mut global = to_place.clone();
        if options.relocate {
            global.extend(self.by_class.iter().filter_map(|(&c, pods)| {
                (classes[c].movable && !pods.is_empty() && !to_place.contains(&c)).then_some(c)
            }));
        }
        let cluster = &self.sched.cluster;
        let n_nodes = cluster.nodes.len();
        let reps: Vec<&Pod> = global.iter().map(|&c| &pending[classes[c].members[0]]).collect();

        let (names, requests) = resource_names(&reps, frameworks);
        let mut problem = Problem {
            resources: names.len(),
            nodes: n_nodes,
            classes: Vec::with_capacity(global.len()),
            free: Vec::new(),
            feasible: vec![false; global.len() * n_nodes],
            score: vec![0; global.len() * n_nodes],
            initial: Vec::new(),
            topologies: 0,
            domains: Vec::new(),
            conflicts: Vec::new(),
            guide: None,
            inter_pod: Default::default(),
            objective: options.objective,
            capacity: Vec::new(),
            queue: Vec::new(),
        };
        let mut keys = inter_pod::Keys::new(cluster);
        add_conflicts(&mut problem, &mut keys, cluster, &reps[..to_place.len()]);
        // Pods per class: the tier's to place, the earlier tiers' placed.
        let sizes: Vec<usize> = global
            .iter()
            .enumerate()
            .map(|(k, &c)| {
                if k < to_place.len() {
                    classes[c].members.len()
                } else {
                    self.by_class.get(&c).map_or(0, Vec::len)
                }
            })
            .collect();
        let soft_spread = inter_pod::add_spread(
            &mut problem,
            &mut keys,
            &reps,
            &sizes,
            to_place.len(),
            frameworks,
        );
        let affinity_masks =
            inter_pod::add_affinity(&mut problem, &mut keys, &reps, to_place.len(), frameworks);
        inter_pod::add_preferred(&mut problem, &mut keys, &reps, to_place.len(), frameworks);
        keys.fill(&mut problem);
        problem.free = free_capacity(cluster, &names);
        problem.capacity = objective::capacity(cluster, &names);
        for (k, &c) in global.iter().enumerate() {
            let placing = k < to_place.len();
            problem.classes.push(ClassSpec {
                count: if placing {
                    u32::try_from(classes[c].members.len()).unwrap_or(u32::MAX)
                } else {
                    0
                },
                priority: classes[c].priority,
                requests: names.iter().map(|n| requests[k].get(n).copied().unwrap_or(0)).collect(),
                max_per_node: None,
            });
            if !placing {
                for &g in self.by_class.get(&c).into_iter().flatten() {
                    problem.initial.push(Placed { class: k, node: self.greedy_pods[g].node });
                }
            }
        }
        // Feasibility apart from capacity (the solver tracks capacity) and scores: matrices on
        // the evaluator's backend, one per scheduler name and chunk of classes (a chunk's
        // planes are at most EVAL_CHUNK_CELLS cells; only what the solver keeps outlives it).
        let mut by_name: BTreeMap<(&str, usize), Vec<usize>> = BTreeMap::new();
        for (k, rep) in reps.iter().enumerate() {
            let variant = frameworks[&rep.scheduler_name].variant(rep, k < to_place.len());
            debug_assert_eq!(variant & 4 != 0, soft_spread[k]);
            by_name.entry((rep.scheduler_name.as_str(), variant)).or_default().push(k);
        }
        let per_chunk = (EVAL_CHUNK_CELLS / n_nodes.max(1)).max(1);
        let groups: Vec<((&str, usize), Vec<usize>)> = by_name
            .into_iter()
            .flat_map(|(name, ks)| {
                ks.chunks(per_chunk).map(|chunk| (name, chunk.to_vec())).collect::<Vec<_>>()
            })
            .collect();
        let group_pods: Vec<Vec<Pod>> =
            groups.iter().map(|(_, ks)| ks.iter().map(|&k| reps[k].clone()).collect()).collect();
        // The nodes' side of the encoding is collected once for every group; the groups are
        // encoded on all cores (in order: the first error is the first group's).
        let encs = match crate::encode::NodeSide::build(cluster).and_then(|side| {
            use rayon::prelude::*;
            group_pods
                .par_iter()
                .map(|pods| crate::encode::encode_with(&side, cluster, pods))
                .collect::<Vec<_>>()
                .into_iter()
                .collect::<Result<Vec<_>, _>>()
        }) {
            Ok(encs) => encs,
            Err(e) => return Ok(Err(e.into())),
        };
        for (pods, enc) in group_pods.iter().zip(&encs) {
            for (resource, shift, unit, objects) in widened_units(enc, cluster, pods) {
                let entry =
                    self.widened.entry(resource).or_insert((shift, unit.clone(), objects.clone()));
                if shift > entry.0 {
                    (entry.0, entry.1) = (shift, unit);
                }
                entry.2.extend(objects);
            }
        }
        let mut prepared = Vec::with_capacity(groups.len());
        for ((((name, variant), _), pods), enc) in groups.iter().zip(&group_pods).zip(&encs) {
            let fw = frameworks[*name].matrix_framework(*variant);
            match Prepared::new(fw.profile(), cluster, pods, enc) {
                Ok(p) => prepared.push(p),
                Err(e) => return limit_or_fatal(e.into()),
            }
        }
        let mut source = vec![(0usize, 0usize); global.len()];
        let mut resource_planes = Vec::with_capacity(groups.len());
        // Per cell: NodeResourcesFit's and BalancedAllocation's raw scores at the tier's start.
        let mut fit_start = vec![0u8; global.len() * n_nodes];
        let mut balanced_start = vec![0u8; global.len() * n_nodes];
        // Each solver class's row of the four arrays, taken by the group that evaluates it
        // and filled on all cores.
        let width = n_nodes.max(1);
        let mut rows: Vec<Option<SolverRow<'_>>> = problem
            .feasible
            .chunks_mut(width)
            .zip(problem.score.chunks_mut(width))
            .zip(fit_start.chunks_mut(width).zip(balanced_start.chunks_mut(width)))
            .map(|((feasible, score), (fit0, balanced0))| {
                Some(SolverRow { feasible, score, fit0, balanced0 })
            })
            .collect();
        // One lean matrix at a time, its arrays reused from chunk to chunk.
        let mut m = LeanMatrix::default();
        for (g, (_, ks)) in groups.iter().enumerate() {
            if let Err(e) = evaluator.evaluate_lean_into(&prepared[g], &KEPT_PLANES, &mut m) {
                return limit_or_fatal(e.into());
            }
            let planes = ResourcePlanes::of(&m);
            let mut work = Vec::with_capacity(ks.len());
            for (i, &k) in ks.iter().enumerate() {
                let Some(&c) = encs[g].classes.pod_class.get(i) else { continue };
                let c = c as usize;
                source[k] = (g, c);
                if m.score_errors[c].is_some() {
                    continue; // A plugin error: left to the repair path, which reports it.
                }
                if let Some(row) = rows.get_mut(k).and_then(Option::take) {
                    work.push((c, row));
                }
            }
            {
                use rayon::prelude::*;
                let (m, planes) = (&m, &planes);
                work.into_par_iter().for_each(|(c, row)| solver_row(m, planes, c, n_nodes, row));
            }
            resource_planes.push(planes);
        }
        // Classes evaluated without InterPodAffinity's filter keep its anti-affinity part.
        for (k, mask) in affinity_masks.iter().enumerate() {
            let Some(mask) = mask else { continue };
            for (n, &ok) in mask.iter().enumerate() {
                if !ok {
                    problem.feasible[k * n_nodes + n] = false;
                }
            }
        }
        self.evaluate_ms += eval_start.elapsed().as_secs_f64() * 1000.0;

        // Largest first packs best when the tier fits (and favours the pods worth most by
        // dominant share); when it does not, smallest first (the most pods), the LP-guided
        // greedy and the queue order (kube-scheduler's order, a floor for fairness) are tried
        // from a copy of the state, and the best by the objective is kept
        // ([`kplace_solver::objective::rank`]: tier value, queue order, total score).
        let members: Vec<&[usize]> =
            global.iter().map(|&c| classes[c].members.as_slice()).collect();
        let mut strategies: Vec<Strategy> = match options.solver {
            SolverChoice::Greedy => vec![Strategy::Order(options.class_order)],
            SolverChoice::Lp => vec![Strategy::LpGuided],
            SolverChoice::Auto => vec![Strategy::Order(options.class_order), Strategy::LpGuided],
        };
        if options.try_orders && options.solver != SolverChoice::Lp {
            // The queue order second (the floor of the resources objective), smallest first
            // third.
            let tier_pods: usize = members.iter().take(to_place.len()).map(|m| m.len()).sum();
            for order in [ClassOrder::SmallestFirst, ClassOrder::Given] {
                let cheap = order != ClassOrder::Given
                    || tier_pods.saturating_mul(n_nodes) <= QUEUE_ORDER_CELLS;
                if order != options.class_order && cheap {
                    strategies.insert(1, Strategy::Order(order));
                }
            }
        }
        let mut floor: Option<Vec<u32>> = None;
        if strategies.contains(&Strategy::Order(ClassOrder::Given)) {
            // The tier's pods in PrioritySort's order, as their solver classes.
            let mut pods: Vec<(usize, usize)> =
                Vec::with_capacity(tier_pods_of(&members, to_place.len()));
            for (k, m) in members.iter().take(to_place.len()).enumerate() {
                pods.extend(m.iter().map(|&i| (i, k)));
            }
            let position = queue_positions(pending);
            pods.sort_by_key(|&(i, _)| position[i]);
            problem.queue = pods.into_iter().map(|(_, k)| k).collect();
        }
        let backup = (strategies.len() > 1).then(|| self.save());
        let mut best: Option<Candidate> = None;
        let mut kept = strategies[0];
        let usage_rows: Vec<_> = prepared.iter().map(super::applier::UsageRows::of).collect();
        for (i, &strategy) in strategies.iter().enumerate() {
            if i > 0 && options.deadline.is_some_and(|d| Instant::now() >= d) {
                break;
            }
            let (class_order, guided) = match strategy {
                Strategy::Order(order) => (order, None),
                Strategy::LpGuided => match lp_guide(&problem, &LpOptions::default()) {
                    Ok(Some(guide)) => (
                        options.class_order,
                        Some(Problem { guide: Some(guide), ..problem.clone() }),
                    ),
                    Ok(None) => (options.class_order, None),
                    Err(e) => {
                        tracing::warn!("the LP stage failed ({e}); the greedy goes on without it");
                        (options.class_order, None)
                    }
                },
            };
            if i > 0 {
                // Without a guide the LP strategy is the first strategy again: nothing to try.
                if strategy == Strategy::LpGuided && guided.is_none() {
                    continue;
                }
                let Some(backup) = &backup else { break };
                if let Some(b) = best.as_mut() {
                    b.saved = Some(self.save());
                }
                self.restore(backup.clone());
            }
            let mut applier = Applier {
                cluster: &mut self.sched.cluster,
                plan: &mut self.plan,
                greedy_pods: &mut self.greedy_pods,
                by_class: &mut self.by_class,
                pending,
                shared: &mut self.shared,
                global: &global,
                members: &members,
                next: vec![0; global.len()],
                moving: vec![None; global.len()],
                changed: false,
                dropped: Vec::new(),
                fit_start: &fit_start,
                balanced_start: &balanced_start,
                shrunk: vec![false; n_nodes],
                score: &problem.score,
                nodes: n_nodes,
                encs: &encs,
                prepared: &prepared,
                source: &source,
                max_part: source
                    .iter()
                    .map(|&(g, c)| {
                        let monotone = prepared[g].fit_strategy == STRATEGY_LEAST_ALLOCATED;
                        resource_planes[g].max_part(c, monotone)
                    })
                    .collect(),
                usage: vec![None; encs.len() * n_nodes],
                rows: usage_rows.clone(),
                columns: usage_rows
                    .iter()
                    .map(|rows| super::applier::UsageColumns::new(rows.as_ref(), n_nodes))
                    .collect(),
                weights: source.iter().map(|&(g, c)| resource_planes[g].weights(c)).collect(),
            };
            let greedy = GreedyOptions {
                class_order,
                relocate: options.relocate,
                even_spread: options.even_spread,
                substitute: true,
                trade_again: true,
            };
            let assignment =
                solve_greedy(guided.as_ref().unwrap_or(&problem), &greedy, Some(&mut applier))?;
            let (next, changed, dropped) = (applier.next, applier.changed, applier.dropped);
            let placed = kplace_solver::objective::placed(&problem, &assignment);
            if strategy == Strategy::Order(ClassOrder::Given)
                && options.objective == Objective::Resources
            {
                if let Some(b) = best.as_mut() {
                    b.key.0 = kplace_solver::objective::covers(&problem, &b.placed, &placed);
                }
                floor = Some(placed.clone());
            }
            let admissible = floor
                .as_ref()
                .is_none_or(|f| kplace_solver::objective::covers(&problem, &placed, f));
            let key = (admissible, kplace_solver::objective::rank(&problem, &assignment));
            match best.as_mut() {
                Some(b) if key <= b.key => {
                    if let Some(saved) = b.saved.take() {
                        self.restore(saved);
                    }
                }
                _ => {
                    best = Some(Candidate { key, placed, next, changed, dropped, saved: None });
                    kept = strategy;
                }
            }
            if assignment.unplaced.iter().take(to_place.len()).all(|&u| u == 0) {
                break;
            }
        }
        // The copy of the state before the tier, unused once a strategy is kept, is freed on
        // another thread (a copy of every node).
        if let Some(backup) = backup {
            std::thread::spawn(move || drop(backup));
        }
        let Some(Candidate { next, changed, dropped, .. }) = best else {
            return Ok(Ok(Vec::new()));
        };
        self.strategies.push(kept.name());
        if changed {
            self.version += 1;
        }
        if !dropped.is_empty() {
            self.compact_plan();
        }
        let dropped: BTreeSet<(usize, usize)> = dropped.into_iter().collect();
        let mut leftovers = Vec::new();
        for (k, &c) in to_place.iter().enumerate() {
            if !dropped.is_empty() {
                // Pods dropped by a trade or substitution first (they come earlier in the
                // queue), then those never placed.
                let taken = classes[c].members.get(..next[k]).unwrap_or_default();
                leftovers
                    .extend(taken.iter().filter(|&&m| dropped.contains(&(k, m))).map(|&m| (c, m)));
            }
            leftovers.extend(classes[c].members[next[k]..].iter().map(|&m| (c, m)));
        }
        Ok(Ok(leftovers))
    }

    /// Removes the plan entries a trade or substitution emptied ([`Applier::dropped`]) and renumbers the
    /// greedy pods' plan indices.
    fn compact_plan(&mut self) {
        let mut index = Vec::with_capacity(self.plan.placements.len());
        let mut kept = 0usize;
        for p in &self.plan.placements {
            index.push(if p.pod.is_empty() { usize::MAX } else { kept });
            kept += usize::from(!p.pod.is_empty());
        }
        self.plan.placements.retain(|p| !p.pod.is_empty());
        for gp in &mut self.greedy_pods {
            gp.plan_index = index.get(gp.plan_index).copied().unwrap_or(usize::MAX);
        }
    }

    /// The classes among `cs` (greedy classes of a tier) whose matrices cannot be evaluated
    /// ([`matrix_limit`]), each with the error, found by bisection. Classes that fail only
    /// together (none of them alone) are all returned.
    pub(super) fn out_of_range(
        &self,
        cs: &[usize],
        classes: &[Class],
        pending: &[Pod],
        frameworks: &BTreeMap<String, Frameworks>,
        evaluator: &mut Evaluator,
    ) -> Result<Vec<(usize, String)>, BatchError> {
        let Some(e) = self.matrix_failure(cs, classes, pending, frameworks, evaluator)? else {
            return Ok(Vec::new());
        };
        if cs.len() <= 1 {
            return Ok(cs.iter().map(|&c| (c, e.to_string())).collect());
        }
        let (a, b) = cs.split_at(cs.len() / 2);
        let mut bad = self.out_of_range(a, classes, pending, frameworks, evaluator)?;
        bad.extend(self.out_of_range(b, classes, pending, frameworks, evaluator)?);
        if bad.is_empty() {
            return Ok(cs.iter().map(|&c| (c, e.to_string())).collect());
        }
        Ok(bad)
    }

    /// The matrix limit met evaluating the classes `cs` on the current cluster, if any (what
    /// [`Run::greedy_tier`] evaluates, without solving).
    fn matrix_failure(
        &self,
        cs: &[usize],
        classes: &[Class],
        pending: &[Pod],
        frameworks: &BTreeMap<String, Frameworks>,
        evaluator: &mut Evaluator,
    ) -> Result<Option<BatchError>, BatchError> {
        let cluster = &self.sched.cluster;
        let per_chunk = (EVAL_CHUNK_CELLS / cluster.nodes.len().max(1)).max(1);
        let mut by_name: BTreeMap<(&str, usize), Vec<Pod>> = BTreeMap::new();
        for &c in cs {
            let rep = &pending[classes[c].members[0]];
            let variant = frameworks[&rep.scheduler_name].variant(rep, true);
            by_name.entry((rep.scheduler_name.as_str(), variant)).or_default().push(rep.clone());
        }
        let side = match crate::encode::NodeSide::build(cluster) {
            Ok(side) => side,
            Err(e) => return Ok(Some(e.into())), // An encoding limit, as in the loop below.
        };
        for ((name, variant), reps) in by_name {
            for pods in reps.chunks(per_chunk) {
                let result = crate::encode::encode_with(&side, cluster, pods)
                    .map_err(BatchError::from)
                    .and_then(|enc| {
                        let fw = frameworks[name].matrix_framework(variant);
                        let prepared = Prepared::new(fw.profile(), cluster, pods, &enc)?;
                        evaluator.evaluate_lean(&prepared, &KEPT_PLANES)?;
                        Ok(())
                    });
                match result {
                    Ok(()) => {}
                    Err(e) if matrix_limit(&e) => return Ok(Some(e)),
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(None)
    }

    /// The batch preemption pass over `rest` (pods left unplaced, `(class, pending index)`):
    /// the pods of greedy classes without conflicts, whose profile runs DefaultPreemption, are
    /// given to [`solve_preemption`] with every lower-priority pod on the nodes as a possible
    /// victim; its evictions and placements go into the cluster and the plan. Returns the pods
    /// still unplaced.
    pub(super) fn batch_preempt(
        &mut self,
        rest: Vec<(usize, usize)>,
        classes: &[Class],
        pending: &[Pod],
        frameworks: &BTreeMap<String, Frameworks>,
    ) -> Result<Vec<(usize, usize)>, BatchError> {
        // Preemptor classes, in order of first appearance in `rest`, with their pods.
        let mut order: Vec<usize> = Vec::new();
        let mut pods_of: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        let mut keep = Vec::new();
        for (c, m) in rest {
            let rep = &pending[classes[c].members[0]];
            let fws = &frameworks[&rep.scheduler_name];
            let eligible = classes[c].route == Route::Greedy
                && !classes[c].hard_rules
                && rep.pod_anti_affinity.required.is_empty()
                && rep.host_ports.is_empty()
                && fws.full.profile().plugins.post_filter.contains(&PluginName::DefaultPreemption);
            if !eligible {
                keep.push((c, m));
                continue;
            }
            let list = pods_of.entry(c).or_default();
            if list.is_empty() {
                order.push(c);
            }
            list.push(m);
        }
        if order.is_empty() {
            return Ok(keep);
        }
        let cluster = &self.sched.cluster;
        let reps: Vec<&Pod> = order.iter().map(|&c| &pending[classes[c].members[0]]).collect();
        let (names, requests) = resource_names(&reps, frameworks);
        let row = |pod: &Pod| -> Vec<i64> {
            names
                .iter()
                .map(|n| match n.as_str() {
                    CPU => pod.requests.milli_cpu,
                    MEMORY => pod.requests.memory,
                    EPHEMERAL_STORAGE => pod.requests.ephemeral_storage,
                    PODS => 1,
                    other => pod.requests.get(other),
                })
                .collect()
        };
        let n_nodes = cluster.nodes.len();
        let free = free_capacity(cluster, &names);
        let top = reps.iter().map(|r| r.priority).max().unwrap_or(i32::MIN);
        let mut victims = Vec::new();
        let mut victim_pods: Vec<(usize, Arc<Pod>)> = Vec::new();
        for (n, node) in cluster.nodes.iter().enumerate() {
            for pod in node.pods.iter().filter(|p| p.priority < top) {
                let pdbs = cluster
                    .pdbs
                    .iter()
                    .enumerate()
                    .filter(|(_, pdb)| {
                        !pod.labels.is_empty()
                            && pdb.namespace == pod.namespace
                            && pdb
                                .selector
                                .as_ref()
                                .is_some_and(|s| !s.is_empty() && s.matches(&pod.labels))
                            && !pdb.disrupted_pods.iter().any(|name| *name == pod.name)
                    })
                    .map(|(i, _)| i)
                    .collect();
                victims.push(VictimSpec {
                    node: n,
                    priority: pod.priority,
                    requests: row(pod),
                    pdbs,
                    start_time: crate::baseline::preemption::pod_start_time(pod, self.now),
                });
                victim_pods.push((n, Arc::clone(pod)));
            }
        }
        let mut eligible = vec![false; order.len() * n_nodes];
        for (k, rep) in reps.iter().enumerate() {
            let fws = &frameworks[&rep.scheduler_name];
            let PreFilterOutcome::Proceed(state) = fws.no_fit.pre_filter(rep, cluster) else {
                continue;
            };
            for (n, node) in cluster.nodes.iter().enumerate() {
                eligible[k * n_nodes + n] =
                    state.node_names().is_none_or(|names| names.contains(&node.name))
                        && fws.no_fit.filter(&state, rep, node).is_success();
            }
        }
        // Per preemptor, its soft spread groups (between nodes whose victims cost the same but
        // for their start time, the emptier zone, then node, wins).
        let mut spread = Vec::new();
        let mut spread_of: Vec<Vec<usize>> = Vec::with_capacity(reps.len());
        let mut keys = inter_pod::Keys::new(cluster);
        for rep in &reps {
            let groups =
                inter_pod::preempt_spread(&mut keys, rep, &frameworks[&rep.scheduler_name]);
            spread_of.push((spread.len()..spread.len() + groups.len()).collect());
            spread.extend(groups);
        }
        tracing::debug!(
            "batch preemption: {} preemptor classes, {} victims, {} spread groups",
            reps.len(),
            victims.len(),
            spread.len()
        );
        let problem = PreemptProblem {
            resources: names.len(),
            nodes: n_nodes,
            free,
            victims,
            pdb_allowed: cluster
                .pdbs
                .iter()
                .map(|p| u32::try_from(p.disruptions_allowed).unwrap_or(0))
                .collect(),
            preemptors: order
                .iter()
                .enumerate()
                .map(|(k, &c)| PreemptorSpec {
                    count: u32::try_from(pods_of[&c].len()).unwrap_or(u32::MAX),
                    priority: reps[k].priority,
                    requests: names
                        .iter()
                        .map(|n| requests[k].get(n).copied().unwrap_or(0))
                        .collect(),
                    may_preempt: reps[k].preemption_policy != crate::model::PreemptionPolicy::Never,
                    max_per_node: None,
                    spread: std::mem::take(&mut spread_of[k]),
                })
                .collect(),
            eligible,
            spread,
        };
        let result = match solve_preemption(&problem) {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!("batch preemption skipped: {e}");
                keep.extend(order.iter().flat_map(|c| pods_of[c].iter().map(move |&m| (*c, m))));
                return Ok(keep);
            }
        };
        // Which pod each placement is: the next pod of its class.
        let mut next: BTreeMap<usize, usize> = BTreeMap::new();
        let mut placed_pod: Vec<usize> = Vec::with_capacity(result.placements.len());
        for pl in &result.placements {
            let c = order[pl.preemptor];
            let i = next.entry(c).or_insert(0);
            placed_pod.push(pods_of[&c][*i]);
            *i += 1;
        }
        for ev in &result.evictions {
            let (n, victim) = &victim_pods[ev.victim];
            let node_name = self.sched.cluster.nodes[*n].name.clone();
            self.sched.cluster.nodes[*n].remove_pod(&victim.namespace, &victim.name);
            self.plan.evictions.push(Eviction {
                pod: victim.key(),
                node: node_name,
                preemptor: pending[placed_pod[ev.placement]].key(),
            });
        }
        for (pl, &m) in result.placements.iter().zip(&placed_pod) {
            let node = &mut self.sched.cluster.nodes[pl.node];
            let mut pod = pending[m].clone();
            pod.node_name = Some(node.name.clone());
            self.plan.placements.push(Placement { pod: pod.key(), node: node.name.clone() });
            node.add_pod(Arc::new(pod));
        }
        if !result.placements.is_empty() || !result.evictions.is_empty() {
            self.version += 1;
        }
        for &c in &order {
            let done = next.get(&c).copied().unwrap_or(0);
            keep.extend(pods_of[&c][done..].iter().map(|&m| (c, m)));
        }
        Ok(keep)
    }

    /// Tries to place one pod through the sequential path with `fw` (a profile without
    /// preemption); records only a success. A pod whose class already failed on the same
    /// cluster state is not tried again.
    pub(super) fn try_place(&mut self, fw: &Framework, class: usize, pod: &Pod) -> bool {
        if self.first_pass_failures.get(&class) == Some(&self.version) {
            return false;
        }
        match self.sched.schedule_one(fw, pod) {
            CycleResult::Scheduled(n) => {
                let node = self.sched.cluster.nodes[n].name.clone();
                self.plan.placements.push(Placement { pod: pod.key(), node });
                self.version += 1;
                true
            }
            _ => {
                self.first_pass_failures.insert(class, self.version);
                false
            }
        }
    }

    /// Places one pod through the exact sequential path and records the outcome.
    pub(super) fn schedule_sequential(&mut self, fw: &Framework, class: usize, pod: &Pod) {
        if let Some((version, failure)) = self.failures.get(&class)
            && *version == self.version
        {
            self.plan.unschedulable.push(Unschedulable { pod: pod.key(), ..failure.clone() });
            return;
        }
        let failure = match self.sched.schedule_one(fw, pod) {
            CycleResult::Scheduled(n) => {
                let node = self.sched.cluster.nodes[n].name.clone();
                self.plan.placements.push(Placement { pod: pod.key(), node });
                self.version += 1;
                self.repaired += 1;
                return;
            }
            CycleResult::Preempted(n, victims) => {
                let node = self.sched.cluster.nodes[n].name.clone();
                for v in victims {
                    self.plan.evictions.push(Eviction {
                        pod: v.key(),
                        node: node.clone(),
                        preemptor: pod.key(),
                    });
                }
                self.plan.placements.push(Placement { pod: pod.key(), node });
                self.version += 1;
                self.repaired += 1;
                return;
            }
            CycleResult::Unschedulable(err) => {
                Unschedulable { pod: pod.key(), message: err.message(), reasons: err.reasons() }
            }
            CycleResult::NoNodes => Unschedulable {
                pod: pod.key(),
                message: NO_NODES_AVAILABLE.to_string(),
                reasons: BTreeMap::new(),
            },
            CycleResult::Error(message) => {
                Unschedulable { pod: pod.key(), message, reasons: BTreeMap::new() }
            }
        };
        self.plan.unschedulable.push(failure.clone());
        self.failures.insert(class, (self.version, failure));
    }
}
