//! The manifests in `deploy/`: every document parses into its k8s-openapi type with no field
//! lost (a misspelt field fails the round trip), they refer to each other consistently, the
//! scheduler configuration in the ConfigMap is one kplace accepts, the ClusterRole grants
//! exactly the requests kplace sends, and the leader-election Role grants the Lease kplace is
//! configured to hold, in its namespace, and nothing else.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

fn deploy_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy")
}

/// Every YAML document under `deploy/`, with the file it came from.
fn documents() -> Vec<(String, Value)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(deploy_dir())
        .expect("deploy/ exists")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    files.sort();
    let mut docs = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("readable manifest");
        let values: Vec<Value> = serde_saphyr::from_multiple(&text)
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for v in values.into_iter().filter(|v| !v.is_null()) {
            docs.push((file.display().to_string(), v));
        }
    }
    docs
}

/// Parses `value` as `T` and checks that nothing was dropped: serializing it again gives the
/// same document.
fn typed<T: DeserializeOwned + Serialize>(file: &str, value: &Value) -> T {
    let t: T = serde_json::from_value(value.clone())
        .unwrap_or_else(|e| panic!("{file}: {} does not parse: {e}", value["kind"]));
    let back = serde_json::to_value(&t).expect("serializes");
    assert_eq!(&back, value, "{file}: {} has fields its type does not know", value["kind"]);
    t
}

#[derive(Default)]
struct Manifests {
    service_accounts: Vec<ServiceAccount>,
    cluster_roles: Vec<ClusterRole>,
    bindings: Vec<ClusterRoleBinding>,
    roles: Vec<Role>,
    role_bindings: Vec<RoleBinding>,
    deployments: Vec<Deployment>,
    config_maps: Vec<ConfigMap>,
}

fn manifests() -> Manifests {
    let mut m = Manifests::default();
    for (file, doc) in documents() {
        match (doc["apiVersion"].as_str(), doc["kind"].as_str()) {
            (Some("v1"), Some("ServiceAccount")) => m.service_accounts.push(typed(&file, &doc)),
            (Some("rbac.authorization.k8s.io/v1"), Some("ClusterRole")) => {
                m.cluster_roles.push(typed(&file, &doc));
            }
            (Some("rbac.authorization.k8s.io/v1"), Some("ClusterRoleBinding")) => {
                m.bindings.push(typed(&file, &doc));
            }
            (Some("rbac.authorization.k8s.io/v1"), Some("Role")) => {
                m.roles.push(typed(&file, &doc));
            }
            (Some("rbac.authorization.k8s.io/v1"), Some("RoleBinding")) => {
                m.role_bindings.push(typed(&file, &doc));
            }
            (Some("apps/v1"), Some("Deployment")) => m.deployments.push(typed(&file, &doc)),
            (Some("v1"), Some("ConfigMap")) => m.config_maps.push(typed(&file, &doc)),
            (api, kind) => panic!("{file}: unexpected manifest {api:?} {kind:?}"),
        }
    }
    m
}

#[test]
fn every_manifest_parses_and_each_kind_is_there_once() {
    let m = manifests();
    let counts = [
        ("ServiceAccount", m.service_accounts.len()),
        ("ClusterRole", m.cluster_roles.len()),
        ("ClusterRoleBinding", m.bindings.len()),
        ("Role", m.roles.len()),
        ("RoleBinding", m.role_bindings.len()),
        ("Deployment", m.deployments.len()),
        ("ConfigMap", m.config_maps.len()),
    ];
    for (kind, n) in counts {
        let want = if kind == "ClusterRole" { 2 } else { 1 };
        assert_eq!(n, want, "{want} {kind}");
    }
}

/// Every (group, resource, verb, resource names) a list of rules grants; no wildcard, nothing
/// granted twice.
fn grants(rules: &[PolicyRule]) -> BTreeSet<(String, String, String, String)> {
    let mut granted: BTreeSet<(String, String, String, String)> = BTreeSet::new();
    for rule in rules {
        let groups = rule.api_groups.clone().unwrap_or_default();
        let resources = rule.resources.clone().unwrap_or_default();
        let names = rule.resource_names.clone().unwrap_or_default().join(",");
        assert!(rule.non_resource_urls.is_none(), "no non-resource URLs");
        for g in &groups {
            for r in &resources {
                for v in &rule.verbs {
                    assert_ne!(v, "*", "no wildcard verbs");
                    let fresh = granted.insert((g.clone(), r.clone(), v.clone(), names.clone()));
                    assert!(fresh, "{g}/{r} {v} is granted twice");
                }
            }
        }
    }
    granted
}

#[test]
fn the_cluster_role_grants_exactly_what_kplace_uses() {
    let m = manifests();
    let granted = grants(cluster_role(&m, "kplace").rules.as_deref().unwrap_or_default());
    let read = ["get", "list", "watch"];
    let mut want: BTreeSet<(String, String, String, String)> = BTreeSet::new();
    let mut add = |group: &str, resource: &str, verbs: &[&str], names: &str| {
        for v in verbs {
            want.insert((group.into(), resource.into(), (*v).into(), names.into()));
        }
    };
    // The cluster state.
    add("", "nodes", &read, "");
    add("", "pods", &read, "");
    add("", "namespaces", &read, "");
    add("policy", "poddisruptionbudgets", &read, "");
    add("scheduling.k8s.io", "priorityclasses", &read, "");
    // `schedule`: what default spread selectors read.
    add("", "services", &["list", "watch"], "");
    add("", "replicationcontrollers", &["list", "watch"], "");
    // VolumeBinding's PreFilter.
    add("", "persistentvolumeclaims", &["list", "watch"], "");
    add("apps", "replicasets", &["list", "watch"], "");
    add("apps", "statefulsets", &["list", "watch"], "");
    // Reading a live cluster: PodGroups besides the kinds above.
    add("scheduling.x-k8s.io", "podgroups", &["list"], "");
    add("scheduling.volcano.sh", "podgroups", &["list"], "");
    // `bind`.
    add("", "pods/binding", &["create"], "");
    add("", "pods/eviction", &["create"], "");
    // `schedule`: events, the PodScheduled condition, leader election.
    add("events.k8s.io", "events", &["create", "patch"], "");
    add("", "pods/status", &["patch"], "");
    assert_eq!(granted, want);
}

/// The ClusterRole called `name`.
fn cluster_role<'a>(m: &'a Manifests, name: &str) -> &'a ClusterRole {
    m.cluster_roles
        .iter()
        .find(|r| r.metadata.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("a ClusterRole {name}"))
}

#[test]
fn the_reader_role_grants_list_on_exactly_what_a_live_read_lists() {
    let m = manifests();
    let granted = grants(cluster_role(&m, "kplace-reader").rules.as_deref().unwrap_or_default());
    let want: BTreeSet<(String, String, String, String)> = kplace::live::LISTED
        .iter()
        .map(|(g, r)| ((*g).to_string(), (*r).to_string(), "list".to_string(), String::new()))
        .collect();
    assert_eq!(granted, want);
    // The scheduler's role can read a live cluster too (a CronJob running `kplace plan`).
    let scheduler = grants(cluster_role(&m, "kplace").rules.as_deref().unwrap_or_default());
    for grant in &want {
        assert!(scheduler.contains(grant), "deploy/rbac.yaml grants {grant:?}");
    }
}

/// The leader-election settings the Deployment runs with: the ConfigMap's
/// `leaderElection.resourceName` / `resourceNamespace`, overridden by `--lease-name` /
/// `--lease-namespace` when the Deployment passes them.
fn lease_of(m: &Manifests) -> (String, String) {
    let text = m.config_maps[0].data.as_ref().unwrap().values().next().unwrap().clone();
    let doc: Value = serde_saphyr::from_str(&text).unwrap();
    let args = m.deployments[0].spec.template.spec.as_ref().unwrap().containers[0]
        .args
        .clone()
        .unwrap_or_default();
    let flag = |f: &str| args.iter().position(|a| a == f).map(|i| args[i + 1].clone());
    let name = flag("--lease-name")
        .or_else(|| doc["leaderElection"]["resourceName"].as_str().map(str::to_string))
        .unwrap_or_else(|| "kplace".into());
    let namespace = flag("--lease-namespace")
        .or_else(|| doc["leaderElection"]["resourceNamespace"].as_str().map(str::to_string))
        .unwrap_or_else(|| "kube-system".into());
    (name, namespace)
}

#[test]
fn the_leader_election_role_grants_the_configured_lease_and_nothing_else() {
    let m = manifests();
    let (lease, lease_ns) = lease_of(&m);
    let role = &m.roles[0];
    assert_eq!(
        role.metadata.namespace.as_deref(),
        Some(lease_ns.as_str()),
        "the Role lives where the Lease does"
    );
    let granted = grants(role.rules.as_deref().unwrap_or_default());
    let g = "coordination.k8s.io";
    let want: BTreeSet<(String, String, String, String)> = [
        (g, "leases", "create", ""),
        (g, "leases", "get", lease.as_str()),
        (g, "leases", "update", lease.as_str()),
    ]
    .into_iter()
    .map(|(a, b, c, d)| (a.into(), b.into(), c.into(), d.into()))
    .collect();
    assert_eq!(granted, want);

    let rb = &m.role_bindings[0];
    assert_eq!(rb.metadata.namespace, role.metadata.namespace);
    assert_eq!(
        (rb.role_ref.kind.as_str(), Some(rb.role_ref.name.as_str())),
        ("Role", role.metadata.name.as_deref())
    );
    let sa = &m.service_accounts[0];
    let subjects = rb.subjects.as_deref().unwrap();
    assert_eq!(
        (
            subjects[0].kind.as_str(),
            Some(subjects[0].name.as_str()),
            subjects[0].namespace.as_deref()
        ),
        ("ServiceAccount", sa.metadata.name.as_deref(), sa.metadata.namespace.as_deref())
    );
}

#[test]
fn the_manifests_refer_to_each_other() {
    let m = manifests();
    let sa = &m.service_accounts[0];
    let sa_name = sa.metadata.name.as_deref().unwrap();
    let sa_ns = sa.metadata.namespace.as_deref().unwrap();
    let binding = &m.bindings[0];
    assert_eq!(binding.role_ref.kind, "ClusterRole");
    assert_eq!(binding.role_ref.name, "kplace");
    cluster_role(&m, "kplace");
    let subjects = binding.subjects.as_deref().unwrap();
    assert_eq!(subjects.len(), 1);
    assert_eq!(
        (subjects[0].kind.as_str(), subjects[0].name.as_str(), subjects[0].namespace.as_deref()),
        ("ServiceAccount", sa_name, Some(sa_ns))
    );

    let d = &m.deployments[0];
    assert_eq!(d.metadata.namespace.as_deref(), Some(sa_ns));
    let spec = &d.spec;
    let pod = spec.template.spec.as_ref().unwrap();
    assert_eq!(pod.service_account_name.as_deref(), Some(sa_name));
    let selector = spec.selector.match_labels.as_ref().unwrap();
    let labels = spec.template.metadata.as_ref().unwrap().labels.as_ref().unwrap();
    assert!(selector.iter().all(|(k, v)| labels.get(k) == Some(v)), "the selector matches");

    let container = &pod.containers[0];
    let args = container.args.as_deref().unwrap();
    assert_eq!(args.first().map(String::as_str), Some("schedule"));
    let arg = |flag: &str| {
        let i = args.iter().position(|a| a == flag).unwrap_or_else(|| panic!("{flag} given"));
        args[i + 1].clone()
    };
    let config_path = arg("--config");
    let scheduler_name = arg("--scheduler-name");

    // The config file is the ConfigMap key mounted at the path --config names.
    let cm = &m.config_maps[0];
    let volume = pod
        .volumes
        .as_deref()
        .unwrap()
        .iter()
        .find(|v| v.config_map.as_ref().map(|c| c.name.as_str()) == cm.metadata.name.as_deref())
        .expect("a volume of the ConfigMap");
    let mount = container
        .volume_mounts
        .as_deref()
        .unwrap()
        .iter()
        .find(|vm| vm.name == volume.name)
        .expect("the volume is mounted");
    let key = config_path
        .strip_prefix(&format!("{}/", mount.mount_path))
        .expect("--config lies under the mount");
    let text = cm.data.as_ref().unwrap().get(key).expect("the ConfigMap holds the file");

    // kplace accepts it, and it has a profile for the name the Deployment serves.
    let config = kplace::framework::config::SchedulerConfig::parse(text, "deploy/configmap.yaml")
        .expect("kplace accepts the configuration");
    assert!(config.profile(&scheduler_name).is_some(), "a profile named {scheduler_name}");

    // The leader-election Lease is the one the ClusterRole lets kplace update.
    let doc: Value = serde_saphyr::from_str(text).unwrap();
    assert_eq!(doc["leaderElection"]["resourceName"], "kplace");
    assert_eq!(doc["leaderElection"]["resourceNamespace"], sa_ns);
}

#[test]
fn the_container_runs_unprivileged() {
    let m = manifests();
    let pod = m.deployments[0].spec.template.spec.clone().unwrap();
    assert_eq!(pod.security_context.and_then(|s| s.run_as_non_root), Some(true));
    let sc = pod.containers[0].security_context.clone().unwrap();
    assert_eq!(sc.allow_privilege_escalation, Some(false));
    assert_eq!(sc.read_only_root_filesystem, Some(true));
    assert_eq!(sc.capabilities.and_then(|c| c.drop), Some(vec!["ALL".to_string()]));
}

#[test]
fn the_dockerfile_builds_in_stages_and_runs_as_non_root() {
    let text = std::fs::read_to_string(deploy_dir().join("Dockerfile")).unwrap();
    let froms: Vec<&str> = text.lines().filter(|l| l.starts_with("FROM ")).collect();
    assert_eq!(froms.len(), 2, "{froms:?}");
    assert!(froms[0].starts_with("FROM rust:1") && froms[0].ends_with(" AS builder"));
    assert!(froms[1].contains("distroless/cc"), "{}", froms[1]);
    assert!(text.contains("--locked --bin kplace"));
    assert!(text.lines().any(|l| l.starts_with("USER nonroot")));
}
