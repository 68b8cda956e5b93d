//! Bad input: each case fails with an error naming the file (and line where it helps), the
//! object and the field, or, where the object can be skipped, loads with a warning.

use std::path::{Path, PathBuf};

use kplace::snapshot::{self, BuildOptions, Cluster, Snapshot, SnapshotError};

fn bad(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/bad").join(name)
}

fn load_and_build(paths: &[PathBuf]) -> Result<Cluster, SnapshotError> {
    let snap = snapshot::load(paths)?;
    snapshot::build(&snap, &BuildOptions::default())
}

#[test]
fn bad_input_fails_with_an_error_naming_file_object_and_field() {
    let cases: &[(&str, &str, &[&str])] = &[
        // (case, file, fragments the message must contain)
        (
            "malformed YAML names the file, line and column",
            "malformed.yaml",
            &["malformed.yaml:7:4: invalid YAML", "did not find expected key"],
        ),
        (
            "malformed JSON names the file, line and column",
            "malformed.json",
            &["malformed.json:4:29: invalid JSON", "trailing comma"],
        ),
        (
            "an invalid quantity names the object, the field and the text",
            "bad-quantity.yaml",
            &[
                "bad-quantity.yaml:1 (document 1)",
                "Pod shop/web-1",
                "spec.containers[0].resources.requests.memory",
                "invalid quantity \"1.5.3Gi\"",
            ],
        ),
        (
            "a negative request names the container's field",
            "negative-request.yaml",
            &[
                "negative-request.yaml:1",
                "Pod shop/web-2",
                "spec.containers[1].resources.requests.cpu",
                "negative quantity \"-100m\"",
            ],
        ),
        (
            "a duplicate pod names both definitions",
            "duplicate-pod.yaml",
            &[
                "Pod shop/twin is defined twice",
                "duplicate-pod.yaml:1 (document 1)",
                "duplicate-pod.yaml:12 (document 2, item 1)",
            ],
        ),
        (
            "a duplicate node names both definitions",
            "duplicate-node.yaml",
            &[
                "Node ip-10-0-0-1 is defined twice",
                "duplicate-node.yaml:1",
                "duplicate-node.yaml:6",
            ],
        ),
        (
            "a priority class that does not exist is an error when the pod has no priority",
            "unknown-priority-class.yaml",
            &["Pod batch/urgent", "spec.priorityClassName", "no PriorityClass named \"platinum\""],
        ),
        (
            "an unknown apiVersion of a known kind is rejected",
            "old-pdb-api.yaml",
            &[
                "old-pdb-api.yaml:1",
                "PodDisruptionBudget shop/web",
                "apiVersion \"policy/v1beta1\" is not supported",
                "expected \"policy/v1\"",
            ],
        ),
        (
            "a named file with a document without apiVersion or kind is rejected",
            "no-kind.yaml",
            &["no-kind.yaml:6 (document 2)", "metadata.name \"what-am-i\"", "has no apiVersion"],
        ),
        (
            "an empty file alone holds no objects",
            "empty.yaml",
            &["no Kubernetes objects found in", "empty.yaml"],
        ),
        (
            "a field of the wrong type names its path",
            "wrong-type.yaml",
            &[
                "wrong-type.yaml:1",
                "Pod shop/web-3",
                "spec.containers[0].ports[0].containerPort",
                "invalid type: string \"eighty\"",
            ],
        ),
        (
            "an invalid selector operator names the term",
            "bad-selector.yaml",
            &[
                "Pod shop/web-4",
                "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]\
                 .labelSelector.matchExpressions[0].operator",
                "\"Equals\" is not a valid label selector operator",
            ],
        ),
        (
            "a negative minMember of a coscheduling PodGroup names the field",
            "pod-group-negative-min.yaml",
            &[
                "pod-group-negative-min.yaml:1 (document 1)",
                "PodGroup.scheduling.x-k8s.io ml/pretrain",
                "spec.minMember: must not be negative, got -3",
            ],
        ),
        (
            "a minMember that is not a number names the Volcano PodGroup and the field",
            "pod-group-min-not-a-number.yaml",
            &[
                "pod-group-min-not-a-number.yaml:4 (document 1, item 1)",
                "PodGroup.scheduling.volcano.sh ml/finetune",
                "spec.minMember: invalid type: string \"all\"",
            ],
        ),
        (
            "a directory with no Kubernetes objects is an error",
            "no-objects",
            &["no Kubernetes objects found in", "no-objects"],
        ),
        (
            "a path that does not exist names the path",
            "does-not-exist.yaml",
            &["does-not-exist.yaml"],
        ),
    ];
    for (case, file, fragments) in cases {
        let err = match load_and_build(&[bad(file)]) {
            Ok(_) => panic!("{case}: {file} loaded without an error"),
            Err(e) => e.to_string(),
        };
        for fragment in *fragments {
            assert!(err.contains(fragment), "{case}: {err:?} lacks {fragment:?}");
        }
    }
}

#[test]
fn a_pod_bound_to_a_missing_node_is_skipped_with_a_warning() {
    let cluster = load_and_build(&[bad("unknown-node.yaml")]).unwrap();
    assert_eq!(cluster.ignored.unknown_node, 1);
    assert!(cluster.state.nodes[0].pods.is_empty());
    assert!(cluster.pending.is_empty());
    let w = cluster.warnings.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n");
    for fragment in
        ["unknown-node.yaml:8 (document 2)", "Pod shop/lost", "\"n-gone\"", "not in the snapshot"]
    {
        assert!(w.contains(fragment), "{w:?} lacks {fragment:?}");
    }
}

#[test]
fn an_empty_file_beside_manifests_is_a_warning() {
    let snap = snapshot::load(&[bad("unknown-node.yaml"), bad("empty.yaml")]).unwrap();
    assert_eq!(snap.nodes.len(), 1);
    assert!(
        snap.warnings.iter().any(|w| w.message.contains("empty.yaml: file has no documents")),
        "{:?}",
        snap.warnings
    );
}

#[test]
fn a_directory_skips_documents_that_are_not_objects_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("settings.yaml"), "owner: me\n").unwrap();
    std::fs::write(
        dir.path().join("node.yaml"),
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("README.md"), "# not read\n").unwrap();
    let snap = snapshot::load(&[dir.path().to_path_buf()]).unwrap();
    assert_eq!(snap.nodes.len(), 1);
    assert_eq!(snap.files.len(), 2, "only .yaml/.yml/.json files are read: {:?}", snap.files);
    let w = snap.warnings.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n");
    assert!(w.contains("settings.yaml:1 (document 1): not a Kubernetes object"), "{w}");
}

#[test]
fn text_handed_in_directly_is_strict_about_non_objects() {
    let mut snap = Snapshot::new();
    let err = snap.add_yaml(Path::new("inline.yaml"), "just: a map\n").unwrap_err();
    assert!(
        err.to_string().contains("inline.yaml:1 (document 1): document has no apiVersion"),
        "{err}"
    );
    let err = snap.add_yaml(Path::new("inline.yaml"), "- a\n- list\n").unwrap_err();
    assert!(err.to_string().contains("not a mapping"), "{err}");
    let err = snap
        .add_yaml(
            Path::new("inline.yaml"),
            "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: List\n  items: []\n",
        )
        .unwrap_err();
    assert!(
        err.to_string().contains("inline.yaml:4 (document 1, item 1): a List inside a List"),
        "{err}"
    );
    let err = snap
        .add_yaml(Path::new("inline.yaml"), "apiVersion: v1\nkind: Pod\nmetadata: {namespace: x}\n")
        .unwrap_err();
    assert!(err.to_string().contains("metadata.name: a name is required"), "{err}");
}

#[test]
fn a_yaml_document_with_duplicate_keys_is_rejected() {
    let mut snap = Snapshot::new();
    let err = snap
        .add_yaml(
            Path::new("dup.yaml"),
            "apiVersion: v1\nkind: Node\nkind: Pod\nmetadata: {name: n}\n",
        )
        .unwrap_err();
    assert!(err.to_string().starts_with("dup.yaml:3"), "{err}");
}

#[test]
fn yaml_sharing_objects_through_many_aliases_loads() {
    // 20 anchored specs, each shared by 29 more pods through an alias: 580 aliases of 20
    // anchors, as YAML libraries write shared objects.
    let mut yaml = String::from("apiVersion: v1\nkind: List\nitems:\n");
    let pad = "serving the catalogue, the basket and the checkout pages ".repeat(4);
    for i in 0..600 {
        let group = i % 20;
        yaml.push_str(&format!(
            "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: web-{i}\n    namespace: shop\n    \
             labels: {{app: web, shard: s{group}, tier: frontend, team: storefront}}\n    \
             annotations: {{owner: storefront-team, description: \"pod {i} of the storefront web tier, {pad}\"}}\n"
        ));
        if i < 20 {
            yaml.push_str(&format!(
                "  spec: &spec{group}\n    schedulerName: default-scheduler\n    containers:\n    \
                 - name: web\n      image: registry.example/web:1.{group}\n      \
                 resources: {{requests: {{cpu: {}m, memory: 256Mi}}, limits: {{memory: 512Mi}}}}\n      \
                 ports: [{{containerPort: 8080, protocol: TCP}}]\n    \
                 tolerations: [{{key: dedicated, operator: Equal, value: web, effect: NoSchedule}}]\n",
                100 + group
            ));
        } else {
            yaml.push_str(&format!("  spec: *spec{group}\n"));
        }
    }
    assert_eq!(yaml.matches(": *spec").count(), 580);
    assert!(yaml.len() > 250_000, "{} bytes", yaml.len());
    let mut snap = Snapshot::new();
    snap.add_yaml(Path::new("shared.yaml"), &yaml).unwrap();
    assert_eq!(snap.pods.len(), 600);
    let spec = |i: usize| snap.pods[i].object.spec.clone().unwrap();
    assert_eq!(spec(599), spec(19), "an alias reads as its anchored object");
    assert_ne!(spec(598), spec(19));
}

#[test]
fn an_alias_bomb_is_refused_naming_the_file() {
    // "Billion laughs": nine levels of nine aliases expand to 9^9 strings.
    let mut yaml = String::from(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\ndata:\n  a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n",
    );
    for (prev, name) in "abcdefgh".chars().zip("bcdefghi".chars()) {
        let refs = vec![format!("*{prev}"); 9].join(", ");
        yaml.push_str(&format!("  {name}: &{name} [{refs}]\n"));
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bomb.yaml");
    std::fs::write(&file, &yaml).unwrap();
    let err = snapshot::load(std::slice::from_ref(&file)).unwrap_err().to_string();
    assert!(err.contains("bomb.yaml") && err.contains("invalid YAML"), "{err}");
    assert!(err.contains("anchors and aliases expand past"), "{err}");
}
