// Package provisioningqueue names the message groups of the provisioning FIFO queue, which the webhook,
// the interruption function and the termination function send to. An adapter-ring detail kept in one
// place so every sender groups alike; it imports only the standard library.
package provisioningqueue
