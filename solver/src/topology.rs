//! Inter-pod state of a solve: matching pods counted per topology domain, kept exact as pods
//! land and move, and the hard rules and soft terms that read those counts.
//!
//! Input: [`InterPod`] — counters (a topology of [`crate::Problem::domains`], the classes whose
//! pods count, the nodes whose pods count, the counts of pods already bound per domain) and
//! rules of pod classes over them. Output: whether a pod of a class may go on a node
//! ([`TopologyState::allows`]) and the soft part of its score there
//! ([`TopologyState::soft`]), both read from the current counts in `O(rules of the class)`.
//!
//! Upstream counterparts (kube-scheduler v1.35, `pkg/scheduler/framework/plugins`):
//! - [`Rule::Spread`]: `podtopologyspread/filtering.go` — a node lacking the key fails; the
//!   skew of the node's domain is `count + selfMatch - min`, `min` over the *eligible* domains
//!   (domains of the counter's eligible nodes: the caller applies nodeAffinityPolicy,
//!   nodeTaintsPolicy and the required keys) and 0 when there are fewer than `minDomains`;
//!   `selfMatch` is whether the rule's class is one of the counter's members. With no
//!   eligible domain there is no limit (upstream's critical paths stay at `MaxInt32`).
//! - [`Rule::Affinity`]: `interpodaffinity/filtering.go` `satisfyPodAffinity` — the node has
//!   every term's key and a matching pod in each term's domain; or no pod matches anywhere and
//!   the class matches its own terms (the first pod of a self-affine group).
//! - [`Rule::AntiAffinity`]: the incoming pod's required anti-affinity term, or existing pods'
//!   terms that select the incoming pod (the caller's counter counts those pods): a node whose
//!   domain holds a counted pod fails; a node without the key passes.
//! - [`Rule::Soft`]: `weight × count` in the node's domain (preferred affinity with a positive
//!   weight, preferred anti-affinity and `ScheduleAnyway` spread with a negative one). Upstream
//!   normalizes these over the feasible nodes; the solver keeps the unnormalized sum so that a
//!   placement changes only the scores of its own domains (see the crate's users for the
//!   weights they choose). A `ScheduleAnyway` term also carries its `maxSkew`: no rule for the
//!   pods the queue places (upstream only scores it), but what the solver does beyond them
//!   (relocation) keeps the skew within it ([`TopologyState::soft_spread_allows`]).

use std::collections::BTreeMap;

use crate::greedy::{NO_DOMAIN, SolverError};

/// Pods of some classes counted per domain of one topology.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Counter {
    /// The topology (row of [`crate::Problem::domains`]).
    pub topology: usize,
    /// The classes whose pods count (sorted or not; duplicates are ignored).
    pub members: Vec<usize>,
    /// The nodes whose pods count, one entry per node; empty: every node with the key.
    pub eligible: Vec<bool>,
    /// Pods already on the nodes (not placed by the solve) per domain id; missing entries are 0.
    pub initial: Vec<u32>,
}

/// A rule of one pod class over counters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rule {
    /// `DoNotSchedule` topology spread (hard).
    Spread {
        /// The class the rule constrains.
        class: usize,
        /// Its counter (members: the pods the constraint's selector matches).
        counter: usize,
        /// `maxSkew` (at least 1).
        max_skew: u32,
        /// `minDomains` (1 when unset).
        min_domains: u32,
    },
    /// Required pod affinity (hard): every counter is one term, counting the pods that match
    /// all terms.
    Affinity {
        /// The class the rule constrains.
        class: usize,
        /// One counter per term.
        counters: Vec<usize>,
        /// Whether the class's pods match all its own terms (upstream's first-pod rule).
        self_match: bool,
    },
    /// No counted pod in the node's domain (hard).
    AntiAffinity {
        /// The class the rule constrains.
        class: usize,
        /// The pods it may not share a domain with.
        counter: usize,
    },
    /// `weight × count` in the node's domain added to the class's score on the node.
    Soft {
        /// The class the term scores.
        class: usize,
        /// The pods it counts.
        counter: usize,
        /// Score per counted pod (negative: the class avoids them). A spread term of weight 0
        /// scores nothing: its counter is a tie-break, evened out only after every other
        /// ([`TopologyState::is_tie_break`]).
        weight: i64,
        /// The `maxSkew` of a `ScheduleAnyway` spread term (0: none, as for preferred
        /// affinity): the skew the solver's own moves keep.
        max_skew: u32,
    },
}

impl Rule {
    /// The class the rule applies to.
    pub fn class(&self) -> usize {
        match self {
            Rule::Spread { class, .. }
            | Rule::Affinity { class, .. }
            | Rule::AntiAffinity { class, .. }
            | Rule::Soft { class, .. } => *class,
        }
    }

    /// The counters the rule reads.
    pub fn counters(&self) -> &[usize] {
        match self {
            Rule::Spread { counter, .. }
            | Rule::AntiAffinity { counter, .. }
            | Rule::Soft { counter, .. } => std::slice::from_ref(counter),
            Rule::Affinity { counters, .. } => counters,
        }
    }

    /// Whether the rule restricts where the class may go (all but [`Rule::Soft`]).
    pub fn is_hard(&self) -> bool {
        !matches!(self, Rule::Soft { .. })
    }
}

/// The inter-pod part of a [`crate::Problem`]: counters and the rules that read them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InterPod {
    /// The counters.
    pub counters: Vec<Counter>,
    /// The rules, in any order.
    pub rules: Vec<Rule>,
}

impl InterPod {
    /// Whether there is nothing to track.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Checks indices and lengths against the problem's dimensions.
    pub(crate) fn validate(
        &self,
        classes: usize,
        nodes: usize,
        topologies: usize,
    ) -> Result<(), SolverError> {
        for (i, c) in self.counters.iter().enumerate() {
            let bad = c.topology >= topologies
                || c.members.iter().any(|&m| m >= classes)
                || (!c.eligible.is_empty() && c.eligible.len() != nodes)
                || c.initial.len() > nodes;
            if bad {
                return Err(SolverError::InterPod { what: "counter", index: i });
            }
        }
        for (i, r) in self.rules.iter().enumerate() {
            let bad = r.class() >= classes
                || r.counters().iter().any(|&k| k >= self.counters.len())
                || matches!(r, Rule::Spread { max_skew: 0, .. });
            if bad {
                return Err(SolverError::InterPod { what: "rule", index: i });
            }
        }
        Ok(())
    }
}

/// The counts of a solve and the rules over them. Domain ids must be below the number of
/// nodes (or [`NO_DOMAIN`]); [`crate::Problem::validate`] checks it.
#[derive(Debug, Clone)]
pub struct TopologyState {
    nodes: usize,
    /// `topologies × nodes`, as in the problem.
    domains: Vec<u32>,
    counters: Vec<Counter>,
    rules: Vec<Rule>,
    /// Per counter, per domain id: counted pods.
    counts: Vec<Vec<u32>>,
    /// Per counter: counted pods in all domains.
    totals: Vec<u64>,
    /// Per class: the counters its pods count in.
    member_of: Vec<Vec<usize>>,
    /// Per class: its rules (indices).
    rules_of: Vec<Vec<usize>>,
    /// Per class: whether its pods count in a counter a hard rule reads.
    counted_hard: Vec<bool>,
    /// Per counter read by a spread rule: its eligible domains and how many eligible domains
    /// hold each count (for the minimum).
    spread: Vec<Option<SpreadDomains>>,
    /// Per topology: whether every node is its own domain (a placement changes only its node).
    local: Vec<bool>,
    /// Bumped whenever the minimum of a spread counter changes.
    generation: u64,
}

/// The eligible domains of a spread counter and their counts' histogram.
#[derive(Debug, Clone)]
struct SpreadDomains {
    eligible: Vec<bool>,
    number: u32,
    histogram: BTreeMap<u32, u32>,
    /// Whether a hard rule reads the minimum (else only soft terms' `maxSkew`).
    hard: bool,
    /// Whether only soft terms of weight 0 read it (a tie-break).
    tie_break: bool,
    /// The smallest `maxSkew` of the `ScheduleAnyway` terms that read it.
    soft_max_skew: u32,
    /// The pods bound before the solve per eligible domain, ascending, and their running sums
    /// (one entry more); both empty past [`BOUND_RECORD_DOMAINS`] eligible domains.
    bound: Vec<u32>,
    bound_sums: Vec<u64>,
}

/// Spread counters with more eligible domains than this (node-level ones on large clusters)
/// keep no record of their bound pods per domain; [`TopologyState::removal_keeps_even_skew`]
/// then reads the total alone.
const BOUND_RECORD_DOMAINS: usize = 256;

impl SpreadDomains {
    /// The smallest skew `movable` pods can reach on top of the pods bound before the solve,
    /// each added to the emptiest domain in turn (evening out's best case); `None` without the
    /// record of bound pods or an eligible domain.
    fn even_skew(&self, movable: u64) -> Option<u64> {
        let (&top, _) = self.bound.split_last()?;
        // The lowest `i` domains can all be raised to the level of the next one.
        let mut i = 1;
        while i < self.bound.len()
            && i as u64 * u64::from(self.bound[i]) - self.bound_sums[i] <= movable
        {
            i += 1;
        }
        let pooled = movable + self.bound_sums[i];
        let level = pooled / i as u64;
        let high = level + u64::from(!pooled.is_multiple_of(i as u64));
        Some(high.max(u64::from(top)) - level)
    }

    /// The lowest and highest count over the eligible domains (none without one).
    fn extremes(&self) -> Option<(u32, u32)> {
        let (&min, _) = self.histogram.first_key_value()?;
        let (&max, _) = self.histogram.last_key_value()?;
        Some((min, max))
    }
}

impl TopologyState {
    /// The state before any placement of the solve: the counters' initial counts.
    pub fn new(
        inter: &InterPod,
        classes: usize,
        nodes: usize,
        topologies: usize,
        domains: &[u32],
    ) -> TopologyState {
        let counts: Vec<Vec<u32>> = inter
            .counters
            .iter()
            .map(|c| {
                let mut v = vec![0u32; nodes];
                for (d, &k) in c.initial.iter().enumerate().take(nodes) {
                    v[d] = k;
                }
                v
            })
            .collect();
        let totals = counts.iter().map(|v| v.iter().map(|&k| u64::from(k)).sum()).collect();
        let mut member_of = vec![Vec::new(); classes];
        for (i, c) in inter.counters.iter().enumerate() {
            for &m in &c.members {
                if let Some(list) = member_of.get_mut(m)
                    && list.last() != Some(&i)
                {
                    list.push(i);
                }
            }
        }
        let mut rules_of = vec![Vec::new(); classes];
        for (i, r) in inter.rules.iter().enumerate() {
            if let Some(list) = rules_of.get_mut(r.class()) {
                list.push(i);
            }
        }
        let local = (0..topologies)
            .map(|t| {
                let mut seen = vec![false; nodes];
                domains[t * nodes..(t + 1) * nodes].iter().all(|&d| {
                    d == NO_DOMAIN
                        || seen.get_mut(d as usize).is_some_and(|s| !std::mem::replace(s, true))
                })
            })
            .collect();
        let mut hard_counters = vec![false; inter.counters.len()];
        for r in inter.rules.iter().filter(|r| r.is_hard()) {
            for &k in r.counters() {
                if let Some(h) = hard_counters.get_mut(k) {
                    *h = true;
                }
            }
        }
        let counted_hard =
            member_of.iter().map(|ks| ks.iter().any(|&k| hard_counters[k])).collect();
        let mut state = TopologyState {
            nodes,
            domains: domains.to_vec(),
            counters: inter.counters.clone(),
            rules: inter.rules.clone(),
            counts,
            totals,
            member_of,
            rules_of,
            counted_hard,
            spread: vec![None; inter.counters.len()],
            local,
            generation: 0,
        };
        for r in &inter.rules {
            let (counter, hard, tie_break, soft_max_skew) = match *r {
                Rule::Spread { counter, .. } => (counter, true, false, u32::MAX),
                Rule::Soft { counter, max_skew, weight, .. } if max_skew > 0 => {
                    (counter, false, weight == 0, max_skew)
                }
                _ => continue,
            };
            if let Some(s) = state.spread.get_mut(counter).and_then(Option::as_mut) {
                s.hard |= hard;
                s.tie_break &= tie_break;
                s.soft_max_skew = s.soft_max_skew.min(soft_max_skew);
                continue;
            }
            let mut eligible = vec![false; nodes];
            for n in 0..nodes {
                let d = state.domain(inter.counters[counter].topology, n);
                if d != NO_DOMAIN && state.counts_on(counter, n) {
                    eligible[d as usize] = true;
                }
            }
            let mut histogram = BTreeMap::new();
            for (d, _) in eligible.iter().enumerate().filter(|(_, e)| **e) {
                *histogram.entry(state.counts[counter][d]).or_insert(0) += 1;
            }
            let number = eligible.iter().filter(|&&e| e).count() as u32;
            let (mut bound, mut bound_sums) = (Vec::new(), Vec::new());
            if number as usize <= BOUND_RECORD_DOMAINS {
                bound =
                    (0..nodes).filter(|&d| eligible[d]).map(|d| state.counts[counter][d]).collect();
                bound.sort_unstable();
                bound_sums.push(0);
                for &b in &bound {
                    bound_sums.push(bound_sums.last().copied().unwrap_or(0) + u64::from(b));
                }
            }
            let Some(slot) = state.spread.get_mut(counter) else { continue };
            *slot = Some(SpreadDomains {
                eligible,
                number,
                histogram,
                hard,
                tie_break,
                soft_max_skew,
                bound,
                bound_sums,
            });
        }
        state
    }

    /// The domain of `node` in topology `t`.
    fn domain(&self, t: usize, node: usize) -> u32 {
        self.domains[t * self.nodes + node]
    }

    /// Whether pods on `node` count in `counter` (eligible and with the key).
    pub fn counts_on(&self, counter: usize, node: usize) -> bool {
        let c = &self.counters[counter];
        c.eligible.get(node).copied().unwrap_or(c.eligible.is_empty())
            && self.domain(c.topology, node) != NO_DOMAIN
    }

    /// Whether class `c` has any inter-pod rule.
    pub fn has_rules(&self, c: usize) -> bool {
        self.rules_of.get(c).is_some_and(|r| !r.is_empty())
    }

    /// Whether class `c` has a hard inter-pod rule.
    pub fn has_hard_rules(&self, c: usize) -> bool {
        self.rules_of.get(c).is_some_and(|r| r.iter().any(|&i| self.rules[i].is_hard()))
    }

    /// Whether pods of class `c` count in a counter that a hard rule reads (moving them could
    /// break a decision made on those counts).
    pub fn counted_by_hard_rule(&self, c: usize) -> bool {
        self.counted_hard.get(c).copied().unwrap_or(false)
    }

    /// Counts a pod of class `c` on `node` (or takes it away, with `add` false).
    pub fn update(&mut self, c: usize, node: usize, add: bool) {
        for i in 0..self.member_of.get(c).map_or(0, Vec::len) {
            let k = self.member_of[c][i];
            if !self.counts_on(k, node) {
                continue;
            }
            let d = self.domain(self.counters[k].topology, node) as usize;
            let old = self.counts[k][d];
            let new = if add { old.saturating_add(1) } else { old.saturating_sub(1) };
            if old == new {
                continue;
            }
            self.counts[k][d] = new;
            self.totals[k] =
                if add { self.totals[k] + 1 } else { self.totals[k].saturating_sub(1) };
            if let Some(s) = self.spread.get_mut(k).and_then(Option::as_mut)
                && s.eligible[d]
            {
                let before = s.histogram.keys().next().copied();
                if let Some(h) = s.histogram.get_mut(&old) {
                    *h -= 1;
                    if *h == 0 {
                        s.histogram.remove(&old);
                    }
                }
                *s.histogram.entry(new).or_insert(0) += 1;
                if s.hard && s.histogram.keys().next().copied() != before {
                    self.generation += 1;
                }
            }
        }
    }

    /// Changes whenever a spread rule's minimum changes (a node a spread rule refused may
    /// now be allowed).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The count of `counter` in `node`'s domain (0 without the key).
    pub fn count(&self, counter: usize, node: usize) -> u32 {
        let d = self.domain(self.counters[counter].topology, node);
        if d == NO_DOMAIN { 0 } else { self.counts[counter][d as usize] }
    }

    /// Whether rule `r` reads only topologies where every node is its own domain.
    fn is_local(&self, r: usize) -> bool {
        self.rules[r].counters().iter().all(|&k| self.local[self.counters[k].topology])
    }

    /// Whether every hard rule of class `c` allows a pod on `node` now.
    pub fn allows(&self, c: usize, node: usize) -> bool {
        self.allows_where(c, node, |_| true)
    }

    /// [`TopologyState::allows`] for the rules of class `c` whose locality is `local`
    /// (node-local: every topology they read gives each node its own domain).
    pub fn allows_local(&self, c: usize, node: usize, local: bool) -> bool {
        self.allows_where(c, node, |r| self.is_local(r) == local)
    }

    fn allows_where(&self, c: usize, node: usize, which: impl Fn(usize) -> bool) -> bool {
        let Some(rules) = self.rules_of.get(c) else { return true };
        rules.iter().filter(|&&r| which(r)).all(|&r| self.rule_allows(r, c, node))
    }

    fn rule_allows(&self, r: usize, c: usize, node: usize) -> bool {
        match &self.rules[r] {
            Rule::Spread { counter, max_skew, min_domains, .. } => {
                self.domain(self.counters[*counter].topology, node) != NO_DOMAIN
                    && self.within_skew(*counter, c, node, *max_skew, *min_domains)
            }
            Rule::Affinity { counters, self_match, .. } => {
                if counters
                    .iter()
                    .any(|&k| self.domain(self.counters[k].topology, node) == NO_DOMAIN)
                {
                    return false;
                }
                counters.iter().all(|&k| self.count(k, node) > 0)
                    || (*self_match && counters.iter().all(|&k| self.totals[k] == 0))
            }
            Rule::AntiAffinity { counter, .. } => self.count(*counter, node) == 0,
            Rule::Soft { .. } => true,
        }
    }

    /// Whether a pod of class `c` on `node` keeps every `ScheduleAnyway` term of the class
    /// within its `maxSkew` (`count + selfMatch - min ≤ maxSkew`, `min` over the counter's
    /// eligible domains, as [`Rule::Spread`] without `minDomains`); a node lacking the key
    /// passes (upstream scores such a node apart).
    pub fn soft_spread_allows(&self, c: usize, node: usize) -> bool {
        let Some(rules) = self.rules_of.get(c) else { return true };
        rules.iter().all(|&r| match self.rules[r] {
            Rule::Soft { counter: k, max_skew, .. } if max_skew > 0 => {
                self.domain(self.counters[k].topology, node) == NO_DOMAIN
                    || self.within_skew(k, c, node, max_skew, 1)
            }
            _ => true,
        })
    }

    /// Whether a pod of class `c` in `node`'s domain keeps counter `k` within `max_skew` of its
    /// minimum over the eligible domains (0 while fewer than `min_domains` are eligible; no
    /// limit without an eligible domain, as upstream's critical paths stay at `MaxInt32`).
    fn within_skew(
        &self,
        k: usize,
        c: usize,
        node: usize,
        max_skew: u32,
        min_domains: u32,
    ) -> bool {
        let Some(s) = self.spread_of(k) else { return true };
        let Some((min, _)) = s.extremes() else { return true };
        let min = if s.number < min_domains { 0 } else { min };
        let self_match = u64::from(self.member_of[c].contains(&k));
        u64::from(self.count(k, node)) + self_match <= u64::from(min) + u64::from(max_skew)
    }

    /// The counters whose minimum only `ScheduleAnyway` terms read (no hard rule reads them),
    /// sorted: the ones the solver may even out by moving the pods it placed.
    pub fn soft_spread_counters(&self) -> Vec<usize> {
        self.spread
            .iter()
            .enumerate()
            .filter_map(|(k, s)| s.as_ref().filter(|s| !s.hard).map(|_| k))
            .collect()
    }

    /// The eligible domains of counter `k` when a spread rule reads it.
    fn spread_of(&self, k: usize) -> Option<&SpreadDomains> {
        self.spread.get(k).and_then(Option::as_ref)
    }

    /// Whether counter `k` is read only by `ScheduleAnyway` terms of weight 0: a tie-break,
    /// evened out after the others and read by nothing else of the solve (trading and
    /// substitution leave it out).
    pub fn is_tie_break(&self, k: usize) -> bool {
        self.spread_of(k).is_some_and(|s| s.tie_break)
    }

    /// The `maxSkew` the `ScheduleAnyway` terms reading counter `k` ask for (the smallest of
    /// them): none for a counter a hard rule reads, a tie-break, or one no spread term reads.
    pub fn soft_max_skew(&self, k: usize) -> Option<u32> {
        self.spread_of(k).filter(|s| !s.hard && !s.tie_break).map(|s| s.soft_max_skew)
    }

    /// The imbalance of counter `k` over its eligible domains: its skew (`max − min`) and the
    /// sum of the squared counts, which falls with every pod moved from a domain to one
    /// holding at least two fewer. `(0, 0)` for a counter no spread term reads.
    pub fn imbalance(&self, k: usize) -> (u64, u64) {
        let Some(s) = self.spread_of(k) else { return (0, 0) };
        let Some((min, max)) = s.extremes() else { return (0, 0) };
        let squares = s.histogram.iter().map(|(&v, &n)| u64::from(v).pow(2) * u64::from(n)).sum();
        (u64::from(max - min), squares)
    }

    /// Whether moving one pod counted in `k` from `from`'s domain to `to`'s keeps the counter
    /// from a new maximum or minimum (so its skew cannot grow): the destination ends at most at
    /// the present maximum and the source at least at the present minimum. True for a counter
    /// no spread term reads or a move within a domain.
    pub fn move_within_extremes(&self, k: usize, from: usize, to: usize) -> bool {
        let Some(s) = self.spread_of(k) else { return true };
        let Some((min, max)) = s.extremes() else { return true };
        let t = self.counters[k].topology;
        let (df, dt) = (self.domain(t, from), self.domain(t, to));
        if df == dt {
            return true;
        }
        let to_ok = self.counted_domain(s, k, to).is_none_or(|d| self.counts[k][d] < max);
        let from_ok = self.counted_domain(s, k, from).is_none_or(|d| self.counts[k][d] > min);
        to_ok && from_ok
    }

    /// The domain of `node` in counter `k`'s topology when the counter counts a pod there: the
    /// node has the key, is one of the counter's nodes, and the domain is eligible (`s` is the
    /// counter's spread state).
    fn counted_domain(&self, s: &SpreadDomains, k: usize, node: usize) -> Option<usize> {
        let d = self.domain(self.counters[k].topology, node);
        (d != NO_DOMAIN && self.counts_on(k, node) && s.eligible[d as usize]).then_some(d as usize)
    }

    /// Whether taking one pod counted in `k` off `node` keeps the counter as even as it can
    /// become: the node's domain holds more than the present minimum (so the skew cannot
    /// grow), and the eligible domains' total is not a multiple of their number (a total that
    /// is could be spread with skew 0, one pod fewer could not). True for a counter no spread
    /// term reads, a tie-break ([`TopologyState::is_tie_break`]) and a node the counter does
    /// not count on.
    pub fn removal_keeps_spread(&self, k: usize, node: usize) -> bool {
        self.removal_keeps(k, node, false)
    }

    /// [`TopologyState::removal_keeps_spread`] with the pods bound before the solve taken into
    /// account: the node's domain holds more than the present minimum, and the smallest skew
    /// the solve's pods could reach on top of the bound ones ([`SpreadDomains::even_skew`]) does
    /// not grow with one pod fewer. (A workload with 5 bound pods in one of three zones and 6
    /// placed reaches 5 / 3 / 3; with 5 placed only 5 / 3 / 2.) Counters without the record of
    /// bound pods read the total as `removal_keeps_spread` does.
    pub fn removal_keeps_even_skew(&self, k: usize, node: usize) -> bool {
        self.removal_keeps(k, node, true)
    }

    /// The two removal rules above; `over_bound` picks the second.
    fn removal_keeps(&self, k: usize, node: usize, over_bound: bool) -> bool {
        let Some(s) = self.spread_of(k).filter(|s| !s.tie_break) else {
            return true;
        };
        let Some((min, _)) = s.extremes() else { return true };
        let Some(d) = self.counted_domain(s, k, node) else { return true };
        if self.counts[k][d] <= min {
            return false;
        }
        let total: u64 = s.histogram.iter().map(|(&v, &n)| u64::from(v) * u64::from(n)).sum();
        if over_bound {
            let movable = total.saturating_sub(s.bound_sums.last().copied().unwrap_or(0));
            let after = movable.checked_sub(1).and_then(|m| s.even_skew(m));
            if let (Some(now), Some(after)) = (s.even_skew(movable), after) {
                return after <= now;
            }
        }
        !total.is_multiple_of(u64::from(s.number.max(1)))
    }

    /// Whether one more pod counted in `k` on `node` keeps the counter's maximum, so its skew
    /// cannot grow: the node's domain holds fewer than the present maximum. True for a counter
    /// no spread term reads, a tie-break and a node the counter does not count on.
    pub fn addition_keeps_maximum(&self, k: usize, node: usize) -> bool {
        let Some(s) = self.spread_of(k).filter(|s| !s.tie_break) else {
            return true;
        };
        let Some((_, max)) = s.extremes() else { return true };
        self.counted_domain(s, k, node).is_none_or(|d| self.counts[k][d] < max)
    }

    /// Counter `k`'s eligible domains with their counts, by domain id.
    pub fn eligible_counts(&self, k: usize) -> Vec<(u32, u32)> {
        let Some(s) = self.spread_of(k) else { return Vec::new() };
        s.eligible
            .iter()
            .enumerate()
            .filter(|(_, e)| **e)
            .map(|(d, _)| (d as u32, self.counts[k][d]))
            .collect()
    }

    /// The counters class `c`'s pods count in.
    pub fn counters_of(&self, c: usize) -> &[usize] {
        self.member_of.get(c).map_or(&[], Vec::as_slice)
    }

    /// The topology of counter `k`.
    pub fn topology_of(&self, k: usize) -> usize {
        self.counters[k].topology
    }

    /// Whether class `c` has a `ScheduleAnyway` term with a `maxSkew`.
    pub fn has_soft_spread(&self, c: usize) -> bool {
        self.rules_of.get(c).is_some_and(|rs| {
            rs.iter().any(|&r| matches!(self.rules[r], Rule::Soft { max_skew, .. } if max_skew > 0))
        })
    }

    /// The soft part of class `c`'s score on `node`: `Σ weight × count` over its soft terms.
    pub fn soft(&self, c: usize, node: usize) -> i64 {
        self.soft_where(c, node, |_| true)
    }

    /// [`TopologyState::soft`] over the terms whose locality is `local`.
    pub fn soft_local(&self, c: usize, node: usize, local: bool) -> i64 {
        self.soft_where(c, node, |r| self.is_local(r) == local)
    }

    fn soft_where(&self, c: usize, node: usize, which: impl Fn(usize) -> bool) -> i64 {
        let Some(rules) = self.rules_of.get(c) else { return 0 };
        let mut sum = 0i64;
        for &r in rules.iter().filter(|&&r| which(r)) {
            if let Rule::Soft { counter, weight, .. } = self.rules[r] {
                sum =
                    sum.saturating_add(weight.saturating_mul(i64::from(self.count(counter, node))));
            }
        }
        sum
    }

    /// The topologies of class `c`'s rules that are not node-local, sorted: two nodes with the
    /// same domains in all of them get the same verdicts and soft scores from those rules.
    pub fn shared_topologies(&self, c: usize) -> Vec<usize> {
        let mut ts: Vec<usize> = self
            .rules_of
            .get(c)
            .into_iter()
            .flatten()
            .filter(|&&r| !self.is_local(r))
            .flat_map(|&r| self.rules[r].counters().iter().map(|&k| self.counters[k].topology))
            .collect();
        ts.sort_unstable();
        ts.dedup();
        ts
    }

    /// The domain of `node` in topology `t` (public for the greedy's buckets).
    pub fn domain_of(&self, t: usize, node: usize) -> u32 {
        self.domain(t, node)
    }
}

#[cfg(test)]
mod tests;
