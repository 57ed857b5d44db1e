package main

import (
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/jsii-runtime-go"

	"github.com/nodewright/nodewright/shared/adapters/metrics"
)

// The metrics and dimensions the functions write are shared/adapters/metrics' Catalog (namespace metrics.Namespace);
// every one carries the cluster dimension, and the dashboard and alarms read them by these names.
const (
	dimCluster      = metrics.DimCluster
	dimNodePool     = metrics.DimNodePool
	dimResourceType = metrics.DimResourceType
	dimMessageType  = metrics.DimMessageType
	dimReason       = metrics.DimReason
	dimCode         = metrics.DimCode
	dimDecision     = metrics.DimDecision
	dimMethod       = metrics.DimConsolidationType
	dimType         = metrics.DimType
	dimZone         = metrics.DimZone
	dimCapacityType = metrics.DimCapacityType
	dimInstanceType = metrics.DimInstanceType
	dimPhase        = metrics.DimPhase
	dimResult       = metrics.DimResult
	dimCondition    = metrics.DimCondition
	dimPolicy       = metrics.DimPolicy
)

// metricPeriod is the resolution of the dashboard's graphs: the provisioner and lifecycle functions run
// at least once a minute, and SQS publishes its metrics every minute.
func metricPeriod() awscdk.Duration { return awscdk.Duration_Minutes(jsii.Number(1)) }

// emf reads one cluster's EMF metrics back as CloudWatch metrics, for graphs and alarms.
type emf struct{ cluster string }

// metric is the one series of name that carries only the cluster dimension, labelled label in
// graphs (an alarm's metric has none: CloudWatch would make a labelled one a metric math query).
func (e emf) metric(name, stat, label string) awscloudwatch.Metric {
	props := &awscloudwatch.MetricProps{
		Namespace:     jsii.String(metrics.Namespace),
		MetricName:    jsii.String(name),
		DimensionsMap: &map[string]*string{dimCluster: jsii.String(e.cluster)},
		Statistic:     jsii.String(stat),
		Period:        metricPeriod(),
	}
	if label != "" {
		props.Label = jsii.String(label)
	}
	return awscloudwatch.NewMetric(props)
}

// search is every series of name whose dimensions are exactly the cluster and dims, whatever their
// values, so a graph needs no NodePool, reason or code known at synth time. Each series is labelled
// label followed by its dimension values; terms narrow the search further (e.g. resource_type="cpu").
func (e emf) search(name string, dims []string, stat, label string, terms ...string) awscloudwatch.IMetric {
	schema := append([]string{metrics.Namespace, dimCluster}, dims...)
	query := append([]string{fmt.Sprintf(`MetricName="%s"`, name), fmt.Sprintf(`%s="%s"`, dimCluster, e.cluster)}, terms...)
	legend := []string{label}
	for _, d := range dims {
		legend = append(legend, fmt.Sprintf("${PROP('Dim.%s')}", d))
	}
	return awscloudwatch.NewSearchExpression(&awscloudwatch.SearchExpressionProps{
		Expression: jsii.String(fmt.Sprintf("SEARCH('{%s} %s', '%s')", strings.Join(schema, ","), strings.Join(query, " "), stat)),
		Label:      jsii.String(strings.TrimSpace(strings.Join(legend, " "))),
		Period:     metricPeriod(),
	})
}
