package connect

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/pricing"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// EnvStateTable names the DynamoDB state table; a function with a Store requires it.
const EnvStateTable = "NODEWRIGHT_STATE_TABLE"

// Spec is what a function needs connected.
type Spec struct {
	// Require lists the environment variables the function cannot start without, beyond those Connect
	// itself requires (the cluster name for Kube, the state table for Store).
	Require []string
	// Kube connects to the cluster's API server; Need says what EKS must supply when the environment
	// does not (the service CIDR and version, for functions that launch nodes).
	Kube bool
	Need kube.Need
	// Prices builds the price provider from the environment (NODEWRIGHT_ISOLATED_VPC: the shipped table
	// only, never the Pricing API).
	Prices bool
	// Store builds the state store.
	Store *Store
}

// Store is how the state store is built.
type Store struct {
	// ClaimsView lets a warm invocation read again only the claim shards that changed (state.ClaimsView).
	ClaimsView bool
	// PriceNote makes the launch and disruption decisions of an isolated function say what priced them
	// (state.WithPriceNote); it needs Prices.
	PriceNote bool
}

// Env is a function's connections. The fields a Spec did not ask for are zero.
type Env struct {
	AWS     aws.Config
	Cluster kube.Cluster
	// REST is the API server's client configuration (EKS tokens of the function's role), for clients
	// beside Kube such as the mirrors' dynamic one.
	REST   *rest.Config
	Kube   kubernetes.Interface
	Prices *pricing.Provider
	Store  *state.Store
	getenv func(string) string
}

// Var is the environment variable name's value ("" when unset).
func (e *Env) Var(name string) string { return e.getenv(name) }

// Load connects what spec asks for, reading settings through getenv (os.Getenv in a main). The AWS
// configuration comes from the process's environment as the SDK reads it.
func Load(ctx context.Context, getenv func(string) string, spec Spec) (*Env, error) {
	if spec.Store != nil && spec.Store.PriceNote && !spec.Prices {
		return nil, fmt.Errorf("connect: a store's price note needs Prices") // a wiring mistake, not a setting
	}
	if err := required(getenv, spec); err != nil {
		return nil, err
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("loading AWS configuration: %w", err)
	}
	return connect(ctx, cfg, getenv, spec, eks.NewFromConfig(cfg))
}

// connect builds the connections over an AWS configuration already loaded; eksAPI answers for what the
// environment does not say about the cluster.
func connect(ctx context.Context, cfg aws.Config, getenv func(string) string, spec Spec, eksAPI kube.EKSAPI) (*Env, error) {
	env := &Env{AWS: cfg, getenv: getenv}
	if spec.Kube {
		cluster, err := kube.ClusterFromEnv(ctx, getenv, eksAPI, spec.Need)
		if err != nil {
			return nil, err
		}
		if env.REST, err = kube.RESTConfig(cluster.Endpoint, cluster.CA, kube.NewTokensFromConfig(cfg, cluster.Name)); err != nil {
			return nil, err
		}
		if env.Kube, err = kube.NewClientset(env.REST); err != nil {
			return nil, err
		}
		env.Cluster = cluster
	}
	if spec.Prices {
		prices, err := pricing.NewProviderFromEnv(cfg.Region, getenv)
		if err != nil {
			return nil, err
		}
		env.Prices = prices
	}
	if spec.Store != nil {
		var opts []state.Option
		if spec.Store.ClaimsView {
			opts = append(opts, state.WithClaimsView())
		}
		if spec.Store.PriceNote {
			opts = append(opts, state.WithPriceNote(env.Prices.DecisionNote()))
		}
		env.Store = state.New(state.NewClient(cfg), getenv(EnvStateTable), opts...)
	}
	return env, nil
}

// required checks every variable the function cannot start without and names all that are unset.
func required(getenv func(string) string, spec Spec) error {
	names := append([]string(nil), spec.Require...)
	if spec.Kube {
		names = append(names, kube.EnvClusterName)
	}
	if spec.Store != nil {
		names = append(names, EnvStateTable)
	}
	var missing []string
	seen := map[string]bool{}
	for _, n := range names {
		if !seen[n] && getenv(n) == "" {
			missing = append(missing, n)
		}
		seen[n] = true
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s required but not set", strings.Join(missing, ", "))
	}
	return nil
}
