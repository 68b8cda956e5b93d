//! Finding the cluster to write to, the way kubectl does: `--kubeconfig FILE`, else the files in
//! `KUBECONFIG` (merged), else `~/.kube/config`, else the in-cluster service account; `--context`
//! picks a context (default: the current one).
//!
//! Input: the optional file and context; output: a `kube::Config` with kube's own retries turned
//! off (the binder decides retries itself, see [`super::retry`]) and a description of where it
//! came from. Upstream: client-go `tools/clientcmd/loader.go` (`ClientConfigLoadingRules`) and
//! `rest.InClusterConfig`; one difference: a file named in `KUBECONFIG` that does not exist is an
//! error here, where client-go skips it.

use std::path::{Path, PathBuf};

use kube::config::{KubeConfigOptions, Kubeconfig, KubeconfigError};

use super::BindError;

/// Loads the client configuration. Must run inside a tokio runtime (exec credential plugins are
/// started from it).
pub async fn load_config(
    kubeconfig: Option<&Path>,
    context: Option<&str>,
) -> Result<(kube::Config, String), BindError> {
    let options = KubeConfigOptions { context: context.map(str::to_string), ..Default::default() };
    let describe = |what: String| match context {
        Some(c) => format!("{what}, context {c:?}"),
        None => what,
    };
    let (mut config, source) = if let Some(path) = kubeconfig {
        let kc = Kubeconfig::read_from(path).map_err(|e| kubeconfig_error(Some(path), e))?;
        let config = kube::Config::from_custom_kubeconfig(kc, &options)
            .await
            .map_err(|e| kubeconfig_error(Some(path), e))?;
        (config, describe(format!("kubeconfig {}", path.display())))
    } else {
        let env = std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty());
        match Kubeconfig::read() {
            Ok(kc) => {
                let what = match &env {
                    Some(v) => format!("KUBECONFIG={}", v.to_string_lossy()),
                    None => "~/.kube/config".to_string(),
                };
                let config = kube::Config::from_custom_kubeconfig(kc, &options)
                    .await
                    .map_err(|e| kubeconfig_error(None, e))?;
                (config, describe(format!("kubeconfig {what}")))
            }
            // KUBECONFIG names files: failing to read them is the user's error to see.
            Err(e) if env.is_some() => return Err(kubeconfig_error(None, e)),
            Err(e) if context.is_some() => return Err(kubeconfig_error(None, e)),
            // No kubeconfig at all: in a pod, use its service account.
            Err(kubeconfig) => match kube::Config::incluster() {
                Ok(config) => (config, "in-cluster service account".to_string()),
                Err(in_cluster) => {
                    return Err(BindError::NoCluster {
                        kubeconfig: super::retry::chain(&kubeconfig),
                        in_cluster: super::retry::chain(&in_cluster),
                    });
                }
            },
        }
    };
    config.default_retry = false;
    if config.accept_invalid_certs {
        warn_insecure(&config.cluster_url.to_string(), &source);
    }
    Ok((config, source))
}

/// Warns, once per process, that the server's certificate will not be verified
/// (`insecure-skip-tls-verify: true`): anyone on the path can then read and change what the
/// binder sends, credentials included. kubectl honours the setting silently; a tool that writes
/// to the cluster says so.
fn warn_insecure(server: &str, source: &str) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        tracing::warn!(
            "insecure-skip-tls-verify is set ({source}): the certificate of {server} is not \
             verified, so the connection can be intercepted"
        );
    });
}

fn kubeconfig_error(path: Option<&Path>, source: KubeconfigError) -> BindError {
    // kube writes the file as `'"/path"'`; name it once, plainly.
    let message = match (&source, path) {
        (KubeconfigError::ReadConfig(io, _), Some(_)) => io.to_string(),
        (KubeconfigError::ReadConfig(io, file), None) => format!("{}: {io}", file.display()),
        _ => super::retry::chain(&source),
    };
    BindError::Kubeconfig { path: path.map(PathBuf::from), message }
}
