module example.com/verify-token

go 1.22
