// Where the API server is and how to prove who we are: from a kubeconfig file, or from
// the service account a pod runs as.
#pragma once

#include <string>

#include "model/status.h"

namespace gantry::k8s {

struct Credentials {
  std::string server;  // https://host:port
  std::string ca_pem;  // CA bundle to trust; empty: the system's store
  bool insecure_skip_verify = false;
  std::string token;            // bearer token
  std::string token_file;       // re-read when the server says 401 (tokens rotate)
  std::string client_cert_pem;  // client certificate and key (PEM)
  std::string client_key_pem;
  std::string source;  // where these came from, for messages
};

// Reads a kubeconfig: the `context` named, else its current-context. File paths in it
// are relative to the file's folder. Errors name the file and the missing entry.
Result<Credentials> LoadKubeconfig(const std::string& path, const std::string& context = "");

// The credentials of a pod's service account (KUBERNETES_SERVICE_HOST/PORT and the files
// under /var/run/secrets/kubernetes.io/serviceaccount). `root` replaces "/" for tests.
Result<Credentials> InClusterCredentials(const std::string& root = "");

// The usual search: an explicit path, else $KUBECONFIG, else in-cluster, else
// ~/.kube/config.
Result<Credentials> FindCredentials(const std::string& kubeconfig_path);

// RFC 4648 base64 (kubeconfig's *-data fields). Errors say where the bad character is.
Result<std::string> Base64Decode(const std::string& text);

}  // namespace gantry::k8s
