package main

import (
	"context"
	"encoding/base64"
	"net/http"

	"github.com/aws/aws-lambda-go/events"

	"github.com/nodewright/nodewright/shared/podwebhook"
)

// handler maps a Function URL request to the intake and its answer back. It never returns an error: a
// Lambda error would be an HTTP 502 the API server has to wait for and then ignore anyway.
func handler(in *podwebhook.Intake) func(context.Context, events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error) {
	return func(ctx context.Context, req events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error) {
		body := []byte(req.Body)
		if req.IsBase64Encoded {
			decoded, err := base64.StdEncoding.DecodeString(req.Body)
			if err != nil {
				return events.LambdaFunctionURLResponse{StatusCode: http.StatusBadRequest, Body: "body is not valid base64"}, nil
			}
			body = decoded
		}
		res := in.Handle(ctx, req.RawPath, body)
		contentType := "text/plain"
		if res.Status == http.StatusOK {
			contentType = "application/json"
		}
		return events.LambdaFunctionURLResponse{StatusCode: res.Status, Body: string(res.Body),
			Headers: map[string]string{"Content-Type": contentType}}, nil
	}
}
