module.exports = () => require('./pasta-da-execucao').apagar();
