//! Substituting for spread: after evening out, a pod this solve placed gives its node to an
//! unplaced pod of another workload of its tier, where that evens the workloads' spread out.
//!
//! Input: the solver's state after evening out, and the pods per tier that trading won.
//! Output: the same state with some placements substituted; per tier no less of any resource
//! requested, no less value under the objective, and no fewer pods than before trading.
//!
//! Why: on an oversubscribed cluster which pods are left over is the objective's choice, and
//! many are alike (the same requests, the same queue rank). Evening out moves pods but never
//! changes which are placed, so a workload may end with its only room in its fullest zone:
//! 5, 4 and 3 replicas per zone where one more in the third, in place of a replica of a
//! workload spread 5, 5 and 5, gives 5, 4, 4 and 5, 5, 4.
//!
//! Rules of a substitution:
//! - The pod taken is unplaced, its class has a `ScheduleAnyway` counter with a single
//!   emptiest domain, and it goes to a node of that domain, checked as the greedy checks a pod
//!   ([`State::can_take`]).
//! - The pod given up is of a class that relocation may move ([`State::movable`]: no hard
//!   inter-pod rule, no conflict, counted by no hard rule), of the same priority, requesting no
//!   more of any resource than the pod taken, and this solve placed more pods of its class
//!   than of the taken pod's: a pod passes from a better-served workload to a worse-served one,
//!   never the other way, so no workload is starved and the placed counts grow no less even.
//! - Over the `ScheduleAnyway` counters of both classes, the skews sorted from largest down
//!   must end lexicographically smaller (the worst spread improves first), and a skew that
//!   rises ends at most 1 (a workload spread as evenly as its count allows may give up a pod
//!   and stay within one of even; a skewed one may not grow more skewed). A substitution that
//!   raises no skew is preferred to one that trades a rise for a larger fall.
//!
//! - Where no single pod will do, two pods on one node may give it up together (one pod for
//!   two smaller ones: a 2-CPU replica for two 1-CPU ones, where every node keeps less than a
//!   CPU free). Each is of a better-served class as above, and leaves as trading's given-up
//!   pod must (`TopologyState::removal_keeps_spread`: not from a domain at its workload's
//!   minimum, not from a total that could be spread evenly, so that a workload evening out
//!   would have spread better is not left short); together they request no more of
//!   any resource than the pod taken (pod slots aside, which every pod requests alike) and are
//!   worth no more under the objective (so never under `Objective::Pods`); and the tier has a
//!   pod to spare: such substitutions spend at most the pods trading won in the tier, so the
//!   tier keeps at least the pods the greedy and relocation placed. A single pod is preferred
//!   to a pair.
//!
//! Each step lowers the sorted skews of all counters, so the pass ends; it also stops after
//! [`SUBSTITUTE_WORK`] units of work (pods and domains looked at).
//!
//! Upstream counterpart: none (kube-scheduler's queue decides which pods are left over, one at
//! a time; the default spreading only scores nodes for each pod as it comes).

use std::cmp::Reverse;
use std::collections::BTreeMap;

use super::polish::SpreadIndex;
use super::{Problem, State};
use crate::objective::pod_values;

/// The work one pass may spend, in pods and domains looked at; past it the spread stays as
/// even as the pass got it.
const SUBSTITUTE_WORK: u64 = 1 << 24;

/// What one trial (pods given up for one taken, on the state, and undone) costs against
/// [`SUBSTITUTE_WORK`].
const TRIAL: u64 = 64;

/// What a pair given up for one pod must keep (see the module doc).
struct PairRule {
    /// The objective's value of one pod per class ([`pod_values`]): the pair's may not exceed
    /// the taken pod's.
    values: Vec<u64>,
    /// Per resource: whether every class requests the same positive amount of it (a node's pod
    /// slots, one per pod). Such a resource counts pods, which a pair spends from the tier's
    /// spare; of every other the pair may request no more than the taken pod.
    per_pod: Vec<bool>,
}

impl PairRule {
    fn new(problem: &Problem) -> Self {
        let per_pod = (0..problem.resources)
            .map(|r| {
                let mut amounts = problem.classes.iter().map(|c| c.requests[r]);
                let first = amounts.next().unwrap_or(0);
                first > 0 && amounts.all(|a| a == first)
            })
            .collect();
        PairRule { values: pod_values(problem), per_pod }
    }
}

impl State<'_, '_> {
    /// Substitutes unplaced pods for placed ones where the rules allow (see the module doc).
    /// `order` is the solve's class order (the order classes are offered a node in); `spare`
    /// the pods per priority that two-for-one substitutions may spend (what trading won).
    /// Returns whether anything changed.
    pub(super) fn substitute_for_spread(
        &mut self,
        order: &[usize],
        mut spare: BTreeMap<i32, u32>,
    ) -> bool {
        let mut counters = self.topo.soft_spread_counters();
        counters.retain(|&k| !self.topo.is_tie_break(k));
        if counters.is_empty()
            || self.placements.is_empty()
            || self.unplaced.iter().all(|&u| u == 0)
        {
            return false;
        }
        let pair_rule = PairRule::new(self.problem);
        let mut index = self.spread_index(&counters);
        let mut given_up = vec![false; self.placements.len()];
        let mut work = SUBSTITUTE_WORK;
        let mut changed = false;
        loop {
            let mut stepped = false;
            for &w in order {
                let prio = self.problem.classes[w].priority;
                while work > 0 && self.unplaced[w] > 0 && self.limit(w) > 0 {
                    let pairs = spare.get(&prio).is_some_and(|&n| n > 0);
                    let found = match self.find_substitute(w, &index, &mut work, None) {
                        None if pairs => {
                            self.find_substitute(w, &index, &mut work, Some(&pair_rule))
                        }
                        found => found,
                    };
                    let Some(gone) = found else { break };
                    let node = self.placements[gone[0]].node;
                    let classes: Vec<usize> =
                        gone.iter().map(|&i| self.placements[i].class).collect();
                    if !self.substitute(w, &classes, node, &index.soft) {
                        break;
                    }
                    for &i in &gone {
                        given_up[i] = true;
                    }
                    if gone.len() > 1
                        && let Some(n) = spare.get_mut(&prio)
                    {
                        *n = n.saturating_sub(1);
                    }
                    index.on_node[node].retain(|j| !gone.contains(j));
                    if index.movable[w] {
                        index.on_node[node].push(self.placements.len() - 1);
                    }
                    given_up.push(false);
                    stepped = true;
                    changed = true;
                }
            }
            if !stepped || work == 0 {
                break;
            }
        }
        self.remove_given_up(&given_up);
        changed
    }

    /// The best substitution for a pod of class `w`, as the placements to give up: the first
    /// that raises no skew, else the first that lowers the sorted skews. With `pairs`, two
    /// pods on one node that together make the room (see the module doc), else single pods.
    /// Each trial is undone.
    fn find_substitute(
        &mut self,
        w: usize,
        index: &SpreadIndex,
        work: &mut u64,
        pairs: Option<&PairRule>,
    ) -> Option<Vec<usize>> {
        let SpreadIndex { soft, in_domain, .. } = index;
        let mut ks: Vec<(u64, usize)> = self
            .topo
            .counters_of(w)
            .iter()
            .filter(|&&k| soft[k])
            .map(|&k| (self.topo.imbalance(k).0, k))
            .filter(|&(skew, _)| skew >= 1)
            .collect();
        ks.sort_unstable_by_key(|&(skew, k)| (Reverse(skew), k));
        let mut fallback: Option<Vec<usize>> = None;
        for (_, k) in ks {
            let counts = self.topo.eligible_counts(k);
            *work = work.saturating_sub(counts.len() as u64);
            let Some(min) = counts.iter().map(|&(_, v)| v).min() else { continue };
            let mut emptiest = counts.iter().filter(|&&(_, v)| v == min);
            let (Some(&(d, _)), None) = (emptiest.next(), emptiest.next()) else { continue };
            let Some(targets) = in_domain.get(&self.topo.topology_of(k)) else { continue };
            for &n in &targets[d as usize] {
                if !self.problem.feasible[self.cell(w, n)]
                    || self.count[self.cell(w, n)] >= self.limit(w)
                {
                    continue;
                }
                let pure = match pairs {
                    None => self.single_on(w, n, index, work, &mut fallback),
                    Some(rule) => self.pair_on(w, n, index, rule, work, &mut fallback),
                };
                if pure.is_some() || *work == 0 {
                    return pure.or(fallback);
                }
            }
        }
        fallback
    }

    /// The givers of a better-served class than `w`'s of its tier on node `n` (see the module
    /// doc), as `(placement, class)`, at most `per_class` of each class.
    fn givers_on(
        &self,
        w: usize,
        n: usize,
        index: &SpreadIndex,
        per_class: usize,
        work: &mut u64,
    ) -> Vec<(usize, usize)> {
        let prio = self.problem.classes[w].priority;
        let placed_w = self.problem.classes[w].count.saturating_sub(self.unplaced[w]);
        let mut givers: Vec<(usize, usize)> = Vec::new();
        for &i in &index.on_node[n] {
            *work = work.saturating_sub(1);
            let c = self.placements[i].class;
            let class = &self.problem.classes[c];
            if c == w
                || !index.movable[c]
                || class.priority != prio
                || class.count.saturating_sub(self.unplaced[c]) <= placed_w
                || givers.iter().filter(|&&(_, x)| x == c).count() >= per_class
            {
                continue;
            }
            givers.push((i, c));
        }
        givers
    }

    /// A single pod on `n` to give up for a pod of class `w`: returns one that raises no skew,
    /// and keeps the first that lowers the sorted skews in `fallback`.
    fn single_on(
        &mut self,
        w: usize,
        n: usize,
        index: &SpreadIndex,
        work: &mut u64,
        fallback: &mut Option<Vec<usize>>,
    ) -> Option<Vec<usize>> {
        for (i, c) in self.givers_on(w, n, index, 1, work) {
            if *work == 0 {
                return None;
            }
            if !self.req(c).iter().zip(self.req(w)).all(|(a, b)| a <= b)
                || !self.room_after(w, n, c)
            {
                continue;
            }
            *work = work.saturating_sub(TRIAL);
            match self.trial(w, &[c], n, &index.soft) {
                Some(true) => return Some(vec![i]),
                Some(false) if fallback.is_none() => *fallback = Some(vec![i]),
                _ => {}
            }
        }
        None
    }

    /// Two pods on `n` to give up together for a pod of class `w` where neither alone makes
    /// room (see the module doc and [`PairRule`]): returns a pair that raises no skew, and
    /// keeps the first that lowers the sorted skews in `fallback`.
    fn pair_on(
        &mut self,
        w: usize,
        n: usize,
        index: &SpreadIndex,
        rule: &PairRule,
        work: &mut u64,
        fallback: &mut Option<Vec<usize>>,
    ) -> Option<Vec<usize>> {
        let placed_w = self.problem.classes[w].count.saturating_sub(self.unplaced[w]);
        let givers = self.givers_on(w, n, index, 2, work);
        let mut tried: Vec<(usize, usize)> = Vec::new();
        for a in 0..givers.len() {
            for &(i2, c2) in &givers[a + 1..] {
                if *work == 0 {
                    return None;
                }
                *work -= 1;
                let (i1, c1) = givers[a];
                let pair = (c1.min(c2), c1.max(c2));
                let req_w = self.req(w);
                let within = (0..self.problem.resources).all(|r| {
                    rule.per_pod[r] || self.req(c1)[r].saturating_add(self.req(c2)[r]) <= req_w[r]
                });
                if tried.contains(&pair)
                    || !within
                    || rule.values[c1].saturating_add(rule.values[c2]) > rule.values[w]
                    || (c1 == c2
                        && self.problem.classes[c1].count.saturating_sub(self.unplaced[c1])
                            < placed_w + 2)
                    || self.room_after(w, n, c1)
                    || self.room_after(w, n, c2)
                    || ![c1, c2].iter().all(|&c| {
                        self.topo
                            .counters_of(c)
                            .iter()
                            .all(|&k| self.topo.removal_keeps_spread(k, n))
                    })
                    || !self.fits_after(n, &[w], &[c1, c2])
                {
                    continue;
                }
                tried.push(pair);
                *work = work.saturating_sub(TRIAL);
                match self.trial(w, &[c1, c2], n, &index.soft) {
                    Some(true) => return Some(vec![i1, i2]),
                    Some(false) if fallback.is_none() => *fallback = Some(vec![i1, i2]),
                    _ => {}
                }
            }
        }
        None
    }

    /// Tries giving up pods of the classes `gone` on `node` for one of class `w`, then undoes
    /// it: `None` when the pod does not fit or the skews do not fall, else whether no skew rose.
    fn trial(&mut self, w: usize, gone: &[usize], node: usize, soft: &[bool]) -> Option<bool> {
        let callback = self.rescore.take();
        let outcome = self.exchange(w, gone, node, soft);
        if outcome.is_some() {
            self.undo_exchange(w, gone, node);
        }
        self.rescore = callback;
        outcome
    }

    /// Makes a substitution found by [`State::find_substitute`] for good, telling the
    /// callback ([`super::Rescore::dropped`] per pod given up, then [`super::Rescore::placed`]).
    /// Returns whether it was made (the caller removes the given-up placements).
    fn substitute(&mut self, w: usize, gone: &[usize], node: usize, soft: &[bool]) -> bool {
        let callback = self.rescore.take();
        let stands = self.exchange(w, gone, node, soft).is_some();
        self.rescore = callback;
        if stands && let Some(r) = self.rescore.as_mut() {
            for &c in gone {
                r.dropped(c, node);
            }
            r.placed(w, node);
        }
        stands
    }

    /// Takes pods of the classes `gone` off `node` and places one of class `w` there when it
    /// can take it and the sorted skews of the touched `ScheduleAnyway` counters fall;
    /// otherwise leaves the state as it was. Returns `None` when not made, else whether no
    /// skew rose.
    fn exchange(&mut self, w: usize, gone: &[usize], node: usize, soft: &[bool]) -> Option<bool> {
        let mut touched: Vec<usize> = self.topo.counters_of(w).to_vec();
        for &c in gone {
            touched.extend_from_slice(self.topo.counters_of(c));
        }
        touched.retain(|&k| soft[k]);
        touched.sort_unstable();
        touched.dedup();
        let before: Vec<u64> = touched.iter().map(|&k| self.topo.imbalance(k).0).collect();
        for &c in gone {
            self.take_off(c, node);
        }
        if !self.can_take(w, node) {
            for &c in gone.iter().rev() {
                self.put_back(c, node);
            }
            return None;
        }
        self.place(w, node);
        let after: Vec<u64> = touched.iter().map(|&k| self.topo.imbalance(k).0).collect();
        let sorted = |v: &[u64]| {
            let mut s = v.to_vec();
            s.sort_unstable_by(|a, b| b.cmp(a));
            s
        };
        let rises_within_one = before.iter().zip(&after).all(|(b, a)| a <= b || *a <= 1);
        if rises_within_one && sorted(&after) < sorted(&before) {
            return Some(before.iter().zip(&after).all(|(b, a)| a <= b));
        }
        self.undo_exchange(w, gone, node);
        None
    }

    /// Undoes [`State::exchange`]: the pod of class `w` leaves `node` (the last placement) and
    /// the pods of the classes `gone` return.
    fn undo_exchange(&mut self, w: usize, gone: &[usize], node: usize) {
        self.placements.pop();
        self.take_off(w, node);
        for &c in gone.iter().rev() {
            self.put_back(c, node);
        }
    }
}
