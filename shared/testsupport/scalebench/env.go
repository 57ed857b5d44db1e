package scalebench

import (
	"context"
	"encoding/base64"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
	"github.com/nodewright/nodewright/shared/testsupport/sandbox"
)

// Names of the benchmark deployment.
const (
	Cluster = "scalebench"
	Table   = "nodewright-scalebench"
)

// Env is one tier's world: a fresh etcd + kube-apiserver (no scheduler or controller-manager: nothing
// may bind, create or delete pods behind the harness's back) and a fresh moto with the deployment's AWS
// resources. Close stops both.
type Env struct {
	CP     *kubetest.ControlPlane
	Moto   *awstest.Moto
	AWS    aws.Config
	Store  *state.Store
	Queues sandbox.Queues
	// Client writes without a client-side rate limit, for loading.
	Client kubernetes.Interface
}

// StartEnv starts the control plane (apiServerEnv added to kube-apiserver's environment) and moto and
// creates the deployment's AWS resources and configuration (Config), as the sandbox does.
func StartEnv(ctx context.Context, apiServerEnv []string) (*Env, error) {
	e := &Env{}
	ok := false
	defer func() {
		if !ok {
			e.Close()
		}
	}()
	var err error
	if e.Moto, err = awstest.Start(ctx); err != nil {
		return nil, fmt.Errorf("starting moto: %w", err)
	}
	if e.CP, err = kubetest.Start(ctx, kubetest.Options{APIServerEnv: apiServerEnv}); err != nil {
		return nil, fmt.Errorf("starting the control plane: %w", err)
	}
	e.AWS = e.Moto.Config()
	if e.Queues, err = sandbox.BuildAWS(ctx, e.AWS, Cluster, Table, Config); err != nil {
		return nil, err
	}
	e.Store = state.New(state.NewClient(e.AWS), Table)
	cfg := kube.Tuned(e.CP.Config)
	cfg.QPS, cfg.Burst = -1, 0 // no client-side limit: the loader's parallelism is the limit
	if e.Client, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, err
	}
	ok = true
	return e, nil
}

// Close stops the control plane and moto.
func (e *Env) Close() {
	if e.CP != nil {
		e.CP.Stop()
	}
	if e.Moto != nil {
		e.Moto.Stop()
	}
}

// Connection is what a child process needs to reach the tier's world.
type Connection struct {
	APIServer string `json:"apiServer"`
	Token     string `json:"token"`
	// CA is the cluster CA as EKS gives it: base64 of PEM.
	CA     string         `json:"ca"`
	Moto   string         `json:"moto"`
	Queues sandbox.Queues `json:"queues"`
}

// Connection describes the env for a child process.
func (e *Env) Connection() Connection {
	return Connection{APIServer: e.CP.Config.Host, Token: e.CP.Config.BearerToken,
		CA: base64.StdEncoding.EncodeToString(e.CP.Config.CAData), Moto: e.Moto.Endpoint, Queues: e.Queues}
}

// RESTConfig is an admin configuration for the connection's API server.
func (c Connection) RESTConfig() (*rest.Config, error) {
	ca, err := base64.StdEncoding.DecodeString(c.CA)
	if err != nil {
		return nil, fmt.Errorf("cluster CA: %w", err)
	}
	return &rest.Config{Host: c.APIServer, BearerToken: c.Token, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}, nil
}

// AWSConfig is a configuration for the connection's moto, as LoadDefaultConfig leaves it in Lambda (no
// configuration-wide retry limit).
func (c Connection) AWSConfig() aws.Config {
	m := &awstest.Moto{Endpoint: c.Moto}
	cfg := m.Config()
	cfg.RetryMaxAttempts = 0
	return cfg
}
