package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/interfaces/interfacesawscloudwatch"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// Dashboard is the operators' CloudWatch dashboard, Nodewright-<cluster>: the alarms' states, then one
// section per concern (scale-up, capacity, interruption, termination, plumbing), each headed by a line
// saying what it tells an operator.
type Dashboard struct {
	constructs.Construct
	Dashboard awscloudwatch.Dashboard
}

// dashboardSection is a heading line and the graphs under it.
type dashboardSection struct {
	title   string
	meaning string // one line: what the section tells an operator
	widgets []awscloudwatch.IWidget
}

// NewDashboard creates the dashboard for w, with alarms shown at the top.
func NewDashboard(scope constructs.Construct, id string, w Watched, alarms []awscloudwatch.Alarm) *Dashboard {
	c := constructs.NewConstruct(scope, jsii.String(id))
	d := awscloudwatch.NewDashboard(c, jsii.String("Dashboard"), &awscloudwatch.DashboardProps{
		DashboardName:   jsii.String("Nodewright-" + w.ClusterName),
		DefaultInterval: awscdk.Duration_Hours(jsii.Number(3)),
	})
	sections := append([]dashboardSection{alarmSection(alarms)}, metricSections(w)...)
	for _, s := range sections {
		d.AddWidgets(awscloudwatch.NewTextWidget(&awscloudwatch.TextWidgetProps{
			Markdown: jsii.String("#### " + s.title + "\n" + s.meaning),
			Width:    jsii.Number(24), Height: jsii.Number(2),
		}))
		d.AddWidgets(s.widgets...)
	}
	return &Dashboard{Construct: c, Dashboard: d}
}

func alarmSection(alarms []awscloudwatch.Alarm) dashboardSection {
	refs := make([]interfacesawscloudwatch.IAlarmRef, len(alarms))
	for i, a := range alarms {
		refs[i] = a
	}
	return dashboardSection{
		title:   "Alarms",
		meaning: "Anything red here needs an operator; each alarm's description says what to look at first.",
		widgets: []awscloudwatch.IWidget{awscloudwatch.NewAlarmStatusWidget(&awscloudwatch.AlarmStatusWidgetProps{
			Title: jsii.String("Alarm states"), Alarms: &refs, Width: jsii.Number(24),
			SortBy: awscloudwatch.AlarmStatusWidgetSortBy_STATE_UPDATED_TIMESTAMP,
		})},
	}
}

// graph is a time series widget of width grid units on the dashboard's period.
func graph(title string, width float64, left ...awscloudwatch.IMetric) awscloudwatch.IWidget {
	return awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{
		Title: jsii.String(title), Width: jsii.Number(width), Height: jsii.Number(6),
		Left: &left, Period: metricPeriod(),
	})
}
