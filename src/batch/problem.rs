//! Translating a tier into the solver's problem: the conflicts between classes, each node's
//! free capacity per resource, each class's requests, and the solver's rows of a lean matrix.
//!
//! Input: the tier's classes, the working cluster and the evaluated matrix. Output: the parts
//! of a [`kplace_solver::Problem`] that [`super::Run`] assembles. Upstream counterparts:
//! NodeResourcesFit's requests and InterPodAffinity's / NodePorts' filters, read as
//! class-level conflicts.

use super::*;

/// Adds the conflicts between the classes represented by `reps` (the classes the solve places,
/// the first rows of `problem`): required anti-affinity in either direction, with the term's
/// topology key, and conflicting host ports, per node ([`inter_pod::NODE_TOPOLOGY`]).
pub(super) fn add_conflicts(
    problem: &mut Problem,
    keys: &mut inter_pod::Keys<'_>,
    cluster: &ClusterState,
    reps: &[&Pod],
) {
    let incoming: Vec<Vec<AffinityTerm>> = reps
        .iter()
        .map(|rep| {
            rep.pod_anti_affinity
                .required
                .iter()
                .map(|t| AffinityTerm::new_incoming(rep, t, cluster))
                .collect()
        })
        .collect();
    let existing: Vec<Vec<AffinityTerm>> = reps
        .iter()
        .map(|rep| {
            rep.pod_anti_affinity.required.iter().map(|t| AffinityTerm::new(rep, t)).collect()
        })
        .collect();
    // Only classes with required anti-affinity or host ports can conflict: the pair loop skips
    // the rest (a batch of 10,000 distinct classes has 10^8 pairs).
    let namespaces: Vec<&Labels> =
        reps.iter().map(|rep| cluster.namespace_labels(&rep.namespace)).collect();
    for (a, rep_a) in reps.iter().enumerate() {
        if incoming[a].is_empty() && rep_a.host_ports.is_empty() {
            continue;
        }
        for (b, rep_b) in reps.iter().enumerate() {
            for (inc, ext) in incoming[a].iter().zip(&existing[a]) {
                if inc.matches(rep_b, namespaces[b]) || ext.matches(rep_b, namespaces[b]) {
                    let topology = keys.index(&inc.topology_key);
                    problem.conflicts.push(Conflict { a, b, topology });
                }
            }
            if a <= b
                && !rep_b.host_ports.is_empty()
                && !fits_ports(&rep_a.host_ports, &rep_b.host_ports)
            {
                let topology = keys.index(inter_pod::NODE_TOPOLOGY);
                problem.conflicts.push(Conflict { a, b, topology });
            }
        }
    }
}

/// Free capacity of every node per resource of `names` (`nodes × names`, row-major): allocatable
/// less requested, and for `pods` the pod slots left. Negative on an overcommitted node.
pub(super) fn free_capacity(cluster: &ClusterState, names: &[String]) -> Vec<i64> {
    let mut free = Vec::with_capacity(cluster.nodes.len() * names.len());
    for node in &cluster.nodes {
        for name in names {
            free.push(if name == PODS {
                node.allocatable.allowed_pod_number - node.pods.len() as i64
            } else {
                node.allocatable.get(name) - node.requested.get(name)
            });
        }
    }
    free
}

/// The solver's resources for the classes represented by `reps` — cpu, memory,
/// ephemeral-storage, pods, then every extended resource a class asks the solver for — and
/// each class's requests by name.
pub(super) fn resource_names(
    reps: &[&Pod],
    frameworks: &BTreeMap<String, Frameworks>,
) -> (Vec<String>, Vec<BTreeMap<String, i64>>) {
    let mut names: Vec<String> =
        [CPU, MEMORY, EPHEMERAL_STORAGE, PODS].iter().map(|s| (*s).to_string()).collect();
    let mut requests: Vec<BTreeMap<String, i64>> = Vec::new();
    for rep in reps {
        let req = solver_requests(rep, &frameworks[&rep.scheduler_name].full);
        for name in req.keys() {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
        requests.push(req);
    }
    (names, requests)
}

/// What a class asks the solver for: cpu, memory, ephemeral-storage, one pod, and every
/// extended resource NodeResourcesFit checks. Nothing when the profile does not run
/// NodeResourcesFit as a filter.
pub(super) fn solver_requests(pod: &Pod, fw: &Framework) -> BTreeMap<String, i64> {
    let mut out = BTreeMap::new();
    let profile = fw.profile();
    if !profile.plugins.filter.contains(&PluginName::NodeResourcesFit) {
        return out;
    }
    let args = &profile.args.node_resources_fit;
    out.insert(CPU.to_string(), pod.requests.milli_cpu);
    out.insert(MEMORY.to_string(), pod.requests.memory);
    out.insert(EPHEMERAL_STORAGE.to_string(), pod.requests.ephemeral_storage);
    out.insert(PODS.to_string(), 1);
    for (name, &amount) in &pod.requests.scalar {
        if amount <= 0 || !is_scalar_resource_name(name) {
            continue;
        }
        if is_extended_resource_name(name) {
            let group = name.split('/').next().unwrap_or_default();
            if args.ignored_resources.iter().any(|r| r == name)
                || args.ignored_resource_groups.iter().any(|g| g == group)
            {
                continue;
            }
        }
        out.insert(name.clone(), amount);
    }
    out
}

/// One solver class's row of [`Problem::feasible`], [`Problem::score`] and the tier-start raw
/// scores of NodeResourcesFit and NodeResourcesBalancedAllocation ([`NO_RAW`] in `fit0`: the
/// cell keeps the matrix's score).
pub(super) struct SolverRow<'a> {
    pub(super) feasible: &'a mut [bool],
    pub(super) score: &'a mut [i32],
    pub(super) fit0: &'a mut [u8],
    pub(super) balanced0: &'a mut [u8],
}

/// Fills `row` from class `c`'s row of the lean matrix `m`: on every feasible node the total
/// score and the usage-dependent planes' raw scores. The part of the score that does not
/// depend on usage is the total less those planes' weighted raw scores
/// ([`super::applier::Applier`] derives it), so a cell costs the solver 7 bytes where a stored
/// 32-bit static part made it 10. A raw score outside `0..=MAX_NODE_SCORE` (the lean plane
/// holds [`crate::eval::OUT_OF_RANGE`]), or two
/// planes of one kind that disagree (never, for a class without score errors), marks the cell
/// [`NO_RAW`]. The soft spread terms of the solver replace the tier-start spread score: such a
/// class's matrix has no PodTopologySpread score ([`Frameworks::variant`]).
pub(super) fn solver_row(
    m: &LeanMatrix,
    planes: &ResourcePlanes,
    c: usize,
    n_nodes: usize,
    row: SolverRow,
) {
    let cells = m.cell(c, 0)..m.cell(c, 0) + n_nodes;
    let resource: Vec<(&[u8], bool)> = planes
        .planes
        .iter()
        .zip(&planes.is_fit)
        .filter(|((_, _, skipped), _)| !skipped.get(c).copied().unwrap_or(false))
        .filter_map(|(&(i, _, _), &fit)| Some((m.planes[i].normalized.get(cells.clone())?, fit)))
        .collect();
    if let [(a, a_fit), (b, b_fit)] = resource[..]
        && a_fit != b_fit
        && a.len() == n_nodes
        && b.len() == n_nodes
    {
        // The default profile's case, one plane of each kind: branch-free across the row (the
        // arrays are fresh, so writing an infeasible cell's zeros changes nothing).
        let (fit, balanced) = if a_fit { (a, b) } else { (b, a) };
        let max = MAX_NODE_SCORE as u8;
        let cols =
            m.filter[cells.clone()].iter().zip(&m.total[cells]).zip(fit.iter().zip(balanced));
        let out = row
            .feasible
            .iter_mut()
            .zip(row.score.iter_mut())
            .zip(row.fit0.iter_mut().zip(row.balanced0.iter_mut()));
        for (((&word, &total), (&f, &b)), ((feasible, score), (fit0, balanced0))) in cols.zip(out) {
            let yes = word & CELL_FEASIBLE != 0;
            // An out-of-range score is `OUT_OF_RANGE`, above `max`.
            let valid = f <= max && b <= max;
            *feasible = yes;
            *score = if yes { total } else { 0 };
            *fit0 = if !yes {
                0
            } else if valid {
                f
            } else {
                NO_RAW
            };
            *balanced0 = if yes && valid { b } else { 0 };
        }
        return;
    }
    let words = m.filter[cells.clone()].iter().zip(&m.total[cells]).enumerate();
    let out = row
        .feasible
        .iter_mut()
        .zip(row.score.iter_mut())
        .zip(row.fit0.iter_mut().zip(row.balanced0.iter_mut()));
    for ((n, (&word, &total)), ((feasible, score), (fit0, balanced0))) in words.zip(out) {
        if word & CELL_FEASIBLE == 0 {
            continue;
        }
        *feasible = true;
        *score = total;
        let (mut fit, mut balanced) = (None, None);
        let mut valid = true;
        for &(v, is_fit) in &resource {
            let raw = Some(v[n]).filter(|&r| i64::from(r) <= MAX_NODE_SCORE);
            let kind: &mut Option<u8> = if is_fit { &mut fit } else { &mut balanced };
            valid &= raw.is_some() && kind.is_none_or(|k| Some(k) == raw);
            *kind = raw;
        }
        (*fit0, *balanced0) =
            if valid { (fit.unwrap_or(0), balanced.unwrap_or(0)) } else { (NO_RAW, 0) };
    }
}
