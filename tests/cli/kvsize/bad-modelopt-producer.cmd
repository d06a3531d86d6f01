kvsize tests/bad/modelopt-producer --ctx 8k
