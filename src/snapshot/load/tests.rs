use super::*;
use crate::model::GangConvention;

fn snap(yaml: &str) -> Result<Snapshot, SnapshotError> {
    let mut s = Snapshot::new();
    s.add_yaml(Path::new("test.yaml"), yaml)?;
    Ok(s)
}

#[test]
fn large_files_read_in_pieces_load_as_text_handed_in_does() {
    let dir = tempfile::tempdir().unwrap();
    let node = |i: usize| {
        format!(
            "{{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {{\"name\": \"n-{i:06}\", \
                 \"labels\": {{\"zone\": \"z{}\", \"pad\": \"{}\"}}}}}}",
            i % 3,
            "é".repeat(200)
        )
    };
    let items: Vec<String> = (0..20_000).map(node).collect();
    let text = format!(
        "{{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [{}]}}",
        items.join(",\n")
    );
    assert!(text.len() > PARALLEL_READ_MIN, "large enough to be read in pieces");
    let path = dir.path().join("big.json");
    std::fs::write(&path, &text).unwrap();
    assert_eq!(read_text(&path).unwrap(), text);
    let loaded = load(std::slice::from_ref(&path)).unwrap();
    let mut direct = Snapshot::new();
    direct.files.push(path.clone());
    direct.add_json(&path, &text).unwrap();
    assert_eq!(format!("{loaded:?}"), format!("{direct:?}"));
    assert_eq!(loaded.nodes.len(), 20_000);

    // A byte that is not UTF-8 far into the file is an error naming the file.
    let mut bytes = text.into_bytes();
    let at = bytes.len() - 1000;
    bytes[at] = 0xff;
    std::fs::write(&path, &bytes).unwrap();
    let err = load(std::slice::from_ref(&path)).unwrap_err().to_string();
    assert!(err.contains("big.json") && err.contains("valid UTF-8"), "{err}");
}

#[test]
fn duplicate_json_keys_are_errors_naming_file_object_and_field() {
    let cases = [
        (
            "a duplicate label of a pod in a List",
            r#"{"apiVersion": "v1", "kind": "List", "items": [
                    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}},
                    {"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": "p", "namespace": "ns", "labels": {"app": "a", "app": "b"}},
                     "spec": {"containers": []}}]}"#,
            "Pod ns/p: field \"metadata.labels.app\" appears twice (at items[1].metadata.labels)",
        ),
        (
            "a duplicate field of a single node",
            r#"{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
                    "spec": {"unschedulable": true}, "spec": {}}"#,
            "Node n1: field \"spec\" appears twice",
        ),
        (
            "a duplicate in the second of two concatenated documents",
            r#"{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
                   {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2", "name": "n3"}}"#,
            "Node n3: field \"metadata.name\" appears twice",
        ),
    ];
    for (name, text, want) in cases {
        let mut s = Snapshot::new();
        let err = add_json(&mut s, Path::new("snap.json"), text, Strictness::Strict)
            .expect_err(name)
            .to_string();
        assert!(err.starts_with("snap.json:") && err.contains(want), "{name}: {err}");
    }
    let mut s = Snapshot::new();
    let ok = r#"{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"a": "1", "b": "1"}}}"#;
    add_json(&mut s, Path::new("snap.json"), ok, Strictness::Strict).unwrap();
    assert_eq!(s.nodes.len(), 1);
}

/// A snapshot from prepared results, compared whole (objects, sources, warnings).
fn committed(prepared: Vec<Prepared>) -> String {
    let mut s = Snapshot::new();
    object::commit(&mut s, prepared).unwrap();
    format!("{s:?}")
}

#[test]
fn the_fast_readers_read_the_demo_and_the_volumes_fixture_as_the_general_reader_does() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let files = [
        ("demo", "nodes.yaml"),
        ("demo", "pods.yaml"),
        ("demo", "workloads.yaml"),
        // PersistentVolumeClaims (typed) and PersistentVolumes (skipped).
        ("volumes", "claims.yaml"),
        ("volumes", "pods.yaml"),
    ];
    for (dir, name) in files {
        let path = fixtures.join(dir).join(name);
        let text = std::fs::read_to_string(&path).unwrap();
        let general = committed(prepare_yaml_whole(&path, &text, Strictness::Strict).unwrap());
        if name == "claims.yaml" {
            assert!(general.contains("PersistentVolumeClaim"), "{dir}/{name}: claims typed");
        }
        if text.len() > 1_000_000 {
            let docs = split_yaml::parse(&text).expect("a large List is cut");
            let cut = yaml_doc_prepared(&path, docs, Strictness::Strict);
            assert_eq!(committed(cut), general, "{name}: YAML cut in pieces");
        }
        // The same objects as kubectl's JSON, with managedFields (never read).
        let docs: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap();
        let mut items = Vec::new();
        for mut doc in docs {
            match doc.get_mut("items").map(Value::take) {
                Some(Value::Array(list)) => items.extend(list),
                _ => items.push(doc),
            }
        }
        for item in &mut items {
            item["metadata"]["managedFields"] = serde_json::json!([{
                "apiVersion": "v1", "fieldsType": "FieldsV1", "manager": "kubectl",
                "fieldsV1": {"f:metadata": {"f:labels": {".": {}}}}, "operation": "Update"
            }]);
        }
        let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items});
        let json = serde_json::to_string_pretty(&list).unwrap();
        let json_path = path.with_extension("json");
        let fast = fast_json::prepare(&json_path, &json, Strictness::Strict)
            .unwrap_or_else(|| panic!("{name}: the fast JSON reader takes kubectl's JSON"));
        let general_json = prepare_json_general(&json_path, &json, Strictness::Strict).unwrap();
        assert_eq!(committed(fast), committed(general_json), "{name}: JSON typed directly");
    }
}

#[test]
fn large_json_lists_typed_while_scanned_read_as_the_general_reader_does() {
    // Past fast_json's streaming size: elements are typed while the scan goes on, on the
    // guess "a List of the apiVersion before items"; a PodList (items without kind), an
    // apiVersion after items, a second document, a duplicate and a bad element check
    // that a wrong guess or a failed read changes nothing.
    let pod = |i: usize, kind: bool| {
        let mut p = serde_json::json!({
            "apiVersion": "v1",
            "metadata": {"name": format!("pod-{i:05}"), "namespace": "ns",
                         "labels": {"app": format!("a{}", i % 7)}},
            "spec": {"containers": [{"name": "c", "image": "nginx",
                     "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}
        });
        if kind {
            p["kind"] = "Pod".into();
        }
        p
    };
    let items = |kind: bool| (0..6000).map(|i| pod(i, kind)).collect::<Vec<_>>();
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items(true)});
    let pretty = serde_json::to_string_pretty(&list).unwrap();
    let pod_list =
        serde_json::json!({"apiVersion": "v1", "kind": "PodList", "items": items(false)});
    let after = format!(
        "{{\"kind\": \"List\", \"items\": {}, \"apiVersion\": \"v1\"}}",
        serde_json::to_string(&items(true)).unwrap()
    );
    let two_docs = format!(
        "{}\n{}",
        serde_json::to_string(&list).unwrap(),
        serde_json::to_string(&serde_json::json!({
            "apiVersion": "v1", "kind": "List",
            "items": (6000..12000).map(|i| pod(i, true)).collect::<Vec<_>>()
        }))
        .unwrap()
    );
    let mut duplicate = list.clone();
    duplicate["items"][5999]["metadata"]["name"] = "pod-00007".into();
    let mut bad = list.clone();
    bad["items"][2500]["spec"]["containers"] = "no".into();
    let texts = [
        ("pretty", pretty),
        ("PodList", serde_json::to_string(&pod_list).unwrap()),
        ("apiVersion after items", after),
        ("two documents", two_docs),
        ("duplicate", serde_json::to_string(&duplicate).unwrap()),
        ("bad element", serde_json::to_string(&bad).unwrap()),
    ];
    let path = Path::new("big.json");
    let outcome = |prepared: Vec<Prepared>| {
        let mut s = Snapshot::new();
        match object::commit(&mut s, prepared) {
            Ok(()) => format!("{s:?}"),
            Err(e) => format!("error: {e}"),
        }
    };
    for (what, text) in texts {
        assert!(text.len() > fast_json::STREAM_MIN, "{what}: large enough to stream");
        let general = outcome(prepare_json_general(path, &text, Strictness::Strict).unwrap());
        let read = outcome(prepare_json(path, &text, Strictness::Strict).unwrap());
        assert_eq!(read, general, "{what}");
        let fast = fast_json::prepare(path, &text, Strictness::Strict);
        match what {
            "bad element" => assert!(fast.is_none(), "{what}: left to the general reader"),
            _ => assert_eq!(outcome(fast.expect(what)), general, "{what}: fast reader"),
        }
    }
}

#[test]
fn multi_document_streams_and_lists_are_read_with_their_lines() {
    let yaml = "\
apiVersion: v1
kind: Node
metadata:
  name: n1
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata:
    name: p1
    namespace: ns
  spec:
    containers: []
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: cm
---
apiVersion: v1
kind: PodList
items:
- metadata:
    name: p2
  spec:
    containers: []
";
    let s = snap(yaml).unwrap();
    assert_eq!(s.nodes.len(), 1);
    assert_eq!(s.nodes[0].source.line, Some(1));
    assert_eq!(s.pods.len(), 2);
    assert_eq!(s.pods[0].source.document, 1);
    assert_eq!(s.pods[0].source.item, Some(0));
    assert_eq!(s.pods[0].source.line, Some(9));
    assert_eq!(s.pods[1].source.line, Some(24));
    assert_eq!(s.pods[1].object.metadata.namespace.as_deref(), Some("default"));
    assert_eq!(s.skipped.get("ConfigMap"), Some(&1));
}

#[test]
fn json_documents_are_read() {
    let mut s = Snapshot::new();
    s.add_json(
        Path::new("x.json"),
        r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"a"}}
{"apiVersion":"v1","kind":"NodeList","items":[{"metadata":{"name":"b"}}]}"#,
    )
    .unwrap();
    let names: Vec<_> = s.nodes.iter().map(|n| n.object.metadata.name.clone().unwrap()).collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(s.nodes[1].source.line, Some(2));
}

const COSCHED_GROUP: &str = "\
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: train, namespace: ml}
spec: {minMember: 4, minResources: {cpu: '8'}, scheduleTimeoutSeconds: 60}
status: {phase: Pending, running: 0}
";

const VOLCANO_GROUP: &str = "\
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: train, namespace: ml}
spec: {minMember: 2, queue: default, minTaskMember: {worker: 2}}
";

#[test]
fn pod_groups_of_both_conventions_are_read() {
    use crate::model::GangConvention::{Coscheduling, Volcano};
    /// (case, YAML, PodGroups read, warning fragments).
    type Case<'a> = (&'a str, String, &'a [(GangConvention, &'a str, &'a str, i32)], &'a [&'a str]);
    let cases: &[Case<'_>] = &[
        (
            "a coscheduling PodGroup is read with its minMember",
            COSCHED_GROUP.to_string(),
            &[(Coscheduling, "ml", "train", 4)],
            &[],
        ),
        (
            "a volcano PodGroup is read with its minMember",
            VOLCANO_GROUP.to_string(),
            &[(Volcano, "ml", "train", 2)],
            &[],
        ),
        (
            "two conventions' PodGroups of the same name are different objects",
            format!("{COSCHED_GROUP}---\n{VOLCANO_GROUP}"),
            &[(Coscheduling, "ml", "train", 4), (Volcano, "ml", "train", 2)],
            &[],
        ),
        (
            "a PodGroup without a namespace lands in default and without a spec has minMember 0",
            "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g}\n"
                .to_string(),
            &[(Coscheduling, "default", "g", 0)],
            &[],
        ),
        (
            "a PodGroupList expands into PodGroups",
            "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroupList\nitems:\n\
                 - metadata: {name: a, namespace: x}\n  spec: {minMember: 3}\n"
                .to_string(),
            &[(Volcano, "x", "a", 3)],
            &[],
        ),
        (
            "a PodGroup of another API group is skipped with a warning",
            "apiVersion: scheduling.sigs.k8s.io/v1alpha1\nkind: PodGroup\n\
                 metadata: {name: old, namespace: ml}\nspec: {minMember: 2}\n"
                .to_string(),
            &[],
            &["PodGroup ml/old", "apiVersion \"scheduling.sigs.k8s.io/v1alpha1\" is not read"],
        ),
        (
            "spec.minAvailable on a PodGroup is ignored with a warning",
            "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n\
                 metadata: {name: j, namespace: ml}\nspec: {minAvailable: 3}\n"
                .to_string(),
            &[(Volcano, "ml", "j", 0)],
            &["PodGroup.scheduling.volcano.sh ml/j", "spec.minAvailable is not a PodGroup field"],
        ),
    ];
    for (name, yaml, want, warnings) in cases {
        let s = snap(yaml).unwrap_or_else(|e| panic!("{name}: {e}"));
        let got: Vec<_> = s
            .pod_groups
            .iter()
            .map(|g| {
                let o = &g.object;
                (o.convention, o.namespace.as_str(), o.name.as_str(), o.min_member)
            })
            .collect();
        assert_eq!(got, *want, "{name}");
        let text = s.warnings.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n");
        assert_eq!(s.warnings.is_empty(), warnings.is_empty(), "{name}: {text}");
        for w in *warnings {
            assert!(text.contains(w), "{name}: {text:?} lacks {w:?}");
        }
    }
}

#[test]
fn bad_pod_groups_fail_naming_file_object_and_field() {
    let doc = |spec: &str| {
        format!(
            "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n\
                 metadata: {{name: train, namespace: ml}}\nspec: {spec}\n"
        )
    };
    let cases: &[(&str, String, &[&str])] = &[
            (
                "a negative minMember is refused",
                doc("{minMember: -2}"),
                &[
                    "test.yaml:1 (document 1)",
                    "PodGroup.scheduling.x-k8s.io ml/train",
                    "spec.minMember: must not be negative, got -2",
                ],
            ),
            (
                "a minMember that is not a number is refused",
                doc("{minMember: four}"),
                &["PodGroup.scheduling.x-k8s.io ml/train", "spec.minMember: invalid type: string"],
            ),
            (
                "a fractional minMember is refused",
                doc("{minMember: 1.5}"),
                &["spec.minMember: invalid type: floating point"],
            ),
            (
                "a spec that is a list is refused",
                doc("[4]"),
                &["PodGroup.scheduling.x-k8s.io ml/train", "spec: invalid type: sequence"],
            ),
            (
                "a PodGroup without a name is refused",
                "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {namespace: ml}\n"
                    .to_string(),
                &["PodGroup.scheduling.volcano.sh ml/<unnamed>", "metadata.name: a name is required"],
            ),
            (
                "labels of the wrong type name their path",
                "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n\
                 metadata: {name: g, namespace: ml, labels: [a]}\n"
                    .to_string(),
                &["PodGroup.scheduling.volcano.sh ml/g", "metadata.labels: invalid type: sequence"],
            ),
            (
                "a PodGroup defined twice names both definitions",
                format!("{COSCHED_GROUP}---\n{COSCHED_GROUP}"),
                &[
                    "PodGroup.scheduling.x-k8s.io ml/train is defined twice",
                    "test.yaml:1 (document 1)",
                    "test.yaml:7 (document 2)",
                ],
            ),
        ];
    for (name, yaml, fragments) in cases {
        let err = match snap(yaml) {
            Ok(_) => panic!("{name}: loaded without an error"),
            Err(e) => e.to_string(),
        };
        for f in *fragments {
            assert!(err.contains(f), "{name}: {err:?} lacks {f:?}");
        }
    }
}
